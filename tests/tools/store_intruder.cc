// A local process that does not know the job's secret, attacking the rendezvous store at
// MASTER_ADDR:MASTER_PORT with the plain store protocol (store_tcp.cc) the way anyone reading the
// source could: it asks for <key> (the root info and its token) and tries to write a key, again
// and again, for <seconds>. Links nothing from hostccl on purpose.
// Usage: store_intruder <key> <seconds>. Exit 0 = every attempt was refused; 1 = it read the key
// or had a write accepted (printed with the time it took); 2 = usage or setup error.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

std::string Request(uint8_t op, const std::string& key, const std::string& value) {
  std::string req = "HCS1";
  req.push_back(static_cast<char>(op));
  for (uint32_t v : {static_cast<uint32_t>(key.size()), static_cast<uint32_t>(value.size())})
    for (int i = 0; i < 4; ++i) req.push_back(static_cast<char>(v >> (8 * i)));
  return req + key + value;
}

// One connection, one request; returns the reply ("" when refused or dropped).
std::string Try(uint16_t port, const std::string& req) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0 &&
      send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
    char buf[8192];
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 5000) != 1) break;  // the server may also just keep us waiting
      ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      reply.append(buf, static_cast<size_t>(n));
      if (reply.size() >= 5) {
        uint32_t len = 0;
        for (int i = 0; i < 4; ++i)
          len |= static_cast<uint32_t>(static_cast<uint8_t>(reply[1 + i])) << (8 * i);
        if (reply.size() >= 5 + static_cast<size_t>(len)) break;
      }
    }
  }
  close(fd);
  return reply;
}

}  // namespace

int main(int argc, char** argv) {
  const char* port_text = getenv("MASTER_PORT");
  if (argc != 3 || port_text == nullptr) {
    fprintf(stderr, "usage: MASTER_PORT=<port> store_intruder <key> <seconds>\n");
    return 2;
  }
  std::string key = argv[1];
  double seconds = atof(argv[2]);
  uint16_t port = static_cast<uint16_t>(atoi(port_text));
  auto start = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  int attempts = 0;
  while (elapsed_ms() < seconds * 1000) {
    ++attempts;
    std::string got = Try(port, Request(2, key, ""));  // Get
    if (got.size() > 5 && got[0] == 0) {
      printf("LEAK: read %zu bytes of '%s' after %.1f ms (attempt %d)\n", got.size() - 5,
             key.c_str(), elapsed_ms(), attempts);
      return 1;
    }
    got = Try(port, Request(1, "intruder/key", "forged"));  // Set
    if (got.size() >= 5 && got[0] == 0) {
      printf("WRITE ACCEPTED: the store stored 'intruder/key' after %.1f ms\n", elapsed_ms());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  printf("refused: %d read and %d write attempts over %.1f s got nothing\n", attempts, attempts,
         seconds);
  return 0;
}
