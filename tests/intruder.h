// What the attack tests share: ranks as threads, free loopback ports, SZ_COMM_ID for a test's
// life, and the intruder's eyes: the loopback ports in LISTEN state that were not there
// before (what a port scan of this host finds).
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/auth.h"
#include "base/socket.h"

namespace intruder {

inline void runRanks(int nranks, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; r++) threads.emplace_back(fn, r);
  for (std::thread& t : threads) t.join();
}

inline int freePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  EXPECT_EQ(bind(fd, (sockaddr*)&a, sizeof(a)), 0);
  EXPECT_EQ(getsockname(fd, (sockaddr*)&a, &len), 0);
  close(fd);
  return ntohs(a.sin_port);
}

// SZ_COMM_ID on a free port, SZ_COMM_SECRET as given (null: unset) and every socket of the
// library on loopback, for the life of the object.
struct CommIdEnv {
  std::string address;
  explicit CommIdEnv(const char* secret = nullptr) : address("127.0.0.1:" + std::to_string(freePort())) {
    setenv("SZ_COMM_ID", address.c_str(), 1);
    if (secret != nullptr) setenv("SZ_COMM_SECRET", secret, 1);
    else unsetenv("SZ_COMM_SECRET");
    setenv("SZ_SOCKET_IFNAME", "lo", 1);
  }
  ~CommIdEnv() {
    unsetenv("SZ_COMM_ID");
    unsetenv("SZ_COMM_SECRET");
  }
};

// The 32-byte id key inside a unique id (after magic, version and flags): what an intruder
// computes from SZ_COMM_ID when SZ_COMM_SECRET is unset.
inline std::vector<uint8_t> idKeyOf(const szUniqueId& id) {
  return std::vector<uint8_t>(id.internal + 8, id.internal + 8 + kSzKeyBytes);
}

// Where the root's address sits in a unique id (after magic, version, flags and the id key).
constexpr size_t kIdRootAt = 8 + kSzKeyBytes;

// The root's address inside a unique id: where a greeting goes.
inline szSocketAddress rootOf(const szUniqueId& id) {
  szSocketAddress root;
  memcpy(&root, id.internal + kIdRootAt, sizeof(root));
  return root;
}

// Ports of 127.0.0.1 in LISTEN state (/proc/net/tcp: local address 0100007F:PORT, state 0A).
inline std::set<int> listeningPorts() {
  std::set<int> ports;
  FILE* f = fopen("/proc/net/tcp", "r");
  if (f == nullptr) return ports;
  char line[512];
  while (fgets(line, sizeof(line), f) != nullptr) {
    unsigned addr = 0, port = 0, state = 0;
    if (sscanf(line, " %*d: %8X:%4X %*8X:%*4X %2X", &addr, &port, &state) == 3 && state == 0x0A &&
        addr == 0x0100007F)
      ports.insert(int(port));
  }
  fclose(f);
  return ports;
}

inline szSocketAddress loopback(int port) {
  szSocketAddress a;
  memset(&a, 0, sizeof(a));
  a.sin.sin_family = AF_INET;
  a.sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin.sin_port = htons(uint16_t(port));
  return a;
}

}  // namespace intruder
