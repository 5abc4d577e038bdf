// The flight recorder's ring (core/flight_recorder.h) on its own: wrap-around, the states, the
// waiting word, stale updates of a reused slot, and the JSON documents parsed back with the
// system's python3 (the dump and the trace must be well-formed; error text is escaped).
#include "core/flight_recorder.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace hostccl::core {
namespace {

// Runs python3 on `code` with the file as argv[1]; returns its stdout ("PARSE-ERROR" if it failed).
std::string Py(const std::string& text, const std::string& code) {
  char path[] = "/tmp/fr_unit_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return "MKSTEMP";
  close(fd);
  std::ofstream(path) << text;
  const std::string cmd = "/usr/bin/python3 -c '" + code + "' " + path + " 2>&1";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    if (pclose(p) != 0) out = "PARSE-ERROR " + out;
  }
  unlink(path);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

constexpr const char* kStates =
    "import json,sys; d=json.load(open(sys.argv[1])); "
    "print(\" \".join(\"%d:%s%s\" % (e[\"seq\"], e[\"state\"], (\"@%d\" % e[\"waiting_for\"]) if \"waiting_for\" in e else \"\") "
    "for e in d[\"entries\"]))";

Fingerprint Fp(uint64_t seq, uint64_t count) {
  Fingerprint fp;
  fp.kind = static_cast<uint8_t>(CollKind::kAllReduce);
  fp.seq = seq;
  fp.count = count;
  return fp;
}

std::unique_ptr<FlightRecorder> Make(const char* entries, bool times = true) {
  setenv("HOSTCCL_FR_ENTRIES", entries, 1);
  setenv("HOSTCCL_FR_TIMESTAMPS", times ? "1" : "0", 1);
  auto f = FlightRecorder::Create({1, 4, "unit \"comm\"", "00ab"});
  unsetenv("HOSTCCL_FR_ENTRIES");
  unsetenv("HOSTCCL_FR_TIMESTAMPS");
  return f;
}

TEST(FlightRecorder, OffWhenZeroEntries) { EXPECT_EQ(Make("0"), nullptr); }

// The ring is a power of two (the slot is a mask): 5 entries keep the last 8.
TEST(FlightRecorder, CapacityRoundsUpToAPowerOfTwo) {
  auto f = Make("5");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->capacity(), 8u);
  EXPECT_EQ(Make("1024")->capacity(), 1024u);
}

// By default an operation records its start only (the time its caller passes, no clock read of
// its own); HOSTCCL_FR_TIMESTAMPS=1 adds the enqueue and end times.
TEST(FlightRecorder, DefaultRecordsTheStartTimeOnly) {
  auto f = Make("4", /*times=*/false);
  ASSERT_NE(f, nullptr);
  f->Enqueued(Fp(1, 8));
  f->Started(1, "direct", 5000000);
  f->Ended(1, Status::Ok());
  EXPECT_EQ(Py(f->Json("test"), "import json,sys; e=json.load(open(sys.argv[1]))[\"entries\"][0]; "
                                "print(e[\"state\"], e[\"t_enqueue_us\"], e[\"t_start_us\"], e[\"t_end_us\"])"),
            "done None 5000 None");
}

TEST(FlightRecorder, RingKeepsTheLastNAfterWrapAround) {
  auto f = Make("4");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->capacity(), 4u);
  for (uint64_t s = 1; s <= 10; ++s) {
    f->Enqueued(Fp(s, s));
    f->Started(s, "ring");
    f->Ended(s, Status::Ok());
  }
  EXPECT_EQ(Py(f->Json("test"), kStates), "7:done 8:done 9:done 10:done");
  // A late update of an operation whose slot was reused changes nothing.
  f->Ended(3, Status(Code::kTimeout, "stale"));
  f->Started(2, "stale");
  EXPECT_EQ(Py(f->Json("test"), kStates), "7:done 8:done 9:done 10:done");
}

TEST(FlightRecorder, StatesWaitingAndEscapedErrors) {
  auto f = Make("8");
  ASSERT_NE(f, nullptr);
  f->Enqueued(Fp(1, 8));
  f->Started(1, "direct");
  f->Ended(1, Status::Ok());
  f->Enqueued(Fp(2, 8));
  f->Started(2, "direct");
  std::atomic<int32_t>* w = f->WaitWord(2);
  ASSERT_NE(w, nullptr);
  w->store(3);
  f->Ended(2, Status(Code::kTimeout, "timed out \"waiting\"\n\tfor rank(s) 3 of 4 \\"));
  f->Enqueued(Fp(3, 16));
  f->Started(3, "direct");
  f->WaitWord(3)->store(0);
  f->Enqueued(Fp(4, 16));
  EXPECT_EQ(f->WaitWord(9), nullptr);
  const std::string js = f->Json("unit \"reason\"");
  EXPECT_EQ(Py(js, kStates), "1:done 2:failed 3:waiting@0 4:queued");
  EXPECT_EQ(Py(js, "import json,sys; d=json.load(open(sys.argv[1])); e=d[\"entries\"][1]; "
                   "print(d[\"rank\"], d[\"nranks\"], d[\"comm_name\"], d[\"reason\"], e[\"error_code\"], e[\"waited_for\"], "
                   "e[\"algo\"], e[\"op\"], e[\"t_end_us\"] >= e[\"t_start_us\"] >= e[\"t_enqueue_us\"] > 0, repr(e[\"error\"]))"),
            "1 4 unit \"comm\" unit \"reason\" HCCL_E_TIMEOUT 3 direct HcclAllReduce True "
            "'timed out \"waiting\"\\n\\tfor rank(s) 3 of 4 \\\\'");
  // The trace: one metadata track name, one slice per started operation.
  EXPECT_EQ(Py(f->TraceJson(), "import json,sys; d=json.load(open(sys.argv[1])); "
                               "print(\" \".join(\"%s:%s\" % (e[\"ph\"], e[\"name\"]) for e in d[\"traceEvents\"]))"),
            "M:process_name M:process_sort_index X:HcclAllReduce X:HcclAllReduce X:HcclAllReduce");
}

// Pipelined completion: a call that completed ahead of its peers is "ahead" (unconfirmed) until
// the settle confirms it; a confirmation covers every earlier "ahead" entry, also across plain
// ones, and leaves later calls alone; a failed settle marks the last one failed (through Ended).
TEST(FlightRecorder, AheadUntilConfirmed) {
  auto f = Make("8");
  ASSERT_NE(f, nullptr);
  auto run = [&](uint64_t s, bool ahead) {
    f->Enqueued(Fp(s, 8));
    f->Started(s, "shm");
    f->Ended(s, Status::Ok(), ahead);
  };
  run(1, true);
  run(2, false);
  run(3, true);
  run(4, true);
  EXPECT_EQ(Py(f->Json("test"), kStates), "1:ahead 2:done 3:ahead 4:ahead");
  f->Confirmed(3);
  EXPECT_EQ(Py(f->Json("test"), kStates), "1:done 2:done 3:done 4:ahead");
  run(5, true);
  f->Ended(5, Status(Code::kPara, "HcclAllReduce #5 mismatch"));
  EXPECT_EQ(Py(f->Json("test"), kStates), "1:done 2:done 3:done 4:ahead 5:failed");
  // Past a wrap-around only what the ring still holds is looked at.
  for (uint64_t s = 6; s <= 20; ++s) run(s, true);
  f->Confirmed(20);
  EXPECT_EQ(Py(f->Json("test"), kStates), "13:done 14:done 15:done 16:done 17:done 18:done 19:done 20:done");
}

}  // namespace
}  // namespace hostccl::core
