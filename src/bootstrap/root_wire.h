// The root server's messages (carried in net::wire frames): ROOT_HELLO from a rank = token,
// nranks and its RankInfo; ROOT_TABLE to every rank = all RankInfos by rank; ROOT_ERROR = a
// code and a reason. Every length is bounded before use; decoders are pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"

namespace hostccl::boot {

constexpr size_t kMaxRankInfoString = 256;
constexpr uint32_t kMaxRanks = 65536;
constexpr size_t kMaxRootHelloBytes = 4096;
// ROOT_ERROR code meaning "this root serves another job/run": the HELLO's token is not its token.
// The payload names the root: what it serves, its job, pid and host. HCCL_E_AGAIN ("try again"),
// which no other root answer uses: a rank-table rank retries until its own root holds the port.
constexpr int32_t kRootErrorOtherJob = static_cast<int32_t>(Code::kAgain);

void AppendRankInfo(const RankInfo& info, std::string* out);
// Reads one record at *off; advances *off. kPara on truncation or an over-long string.
Status ReadRankInfo(const uint8_t* p, size_t len, size_t* off, RankInfo* out);

std::string EncodeRootHello(const uint8_t token[16], uint32_t nranks, const RankInfo& mine);
Status DecodeRootHello(const uint8_t* p, size_t len, uint8_t token[16], uint32_t* nranks, RankInfo* info);

std::string EncodeRankTable(const std::vector<RankInfo>& all);
Status DecodeRankTable(const uint8_t* p, size_t len, std::vector<RankInfo>* all);

// A whole frame (header + payload) as bytes.
std::string MakeRootFrame(uint16_t type, int32_t code, const std::string& payload);

}  // namespace hostccl::boot
