// The ib wire's host slots on the fake NIC (tests/ib_fake/fake_verbs.cc, loaded as
// libibverbs.so.1 through LD_LIBRARY_PATH): two ranks as threads of this process, SZ_WIRE=ib,
// host buffers. `ib_host_app MODE` runs one scenario and prints "PASS MODE" (exit 0) or what
// went wrong (exit 1); tests/ib_fake_test.cc runs each.
//
//   bits      both directions at once in a group, codec off and on, 0 B to 16 MiB of KV-shaped
//             BF16 and odd sizes: every byte arrives, and codec on sends fewer bytes
//   sealed    the same under SZ_ENCRYPT=1 (the host slots seal in place, over RDMA too)
//   mismatch  a receive of one element fewer than its send: szInvalidUsage on both ranks
//   gone      rank 1 destroys its communicator while rank 0 waits in a receive: rank 0 fails
//             with szRemoteError (the link's heartbeat fails) well before its timeout
//   down      the port is down (FAKE_IB_PORT_STATE=down): init fails on both ranks, naming it
//   three     three ranks exchange with both neighbours in one group (a pair connects two peers)
//   chain     three ranks whose first host operations with each other are ordered so that lazy
//             connections would wait in a circle (run with SZ_RUNTIME_CONNECT=0: every host link
//             connects at init): rank 0 sends to 1 and 2 in one group, rank 1 receives from 0
//             and then sends to 2, rank 2 receives from 1 and then from 0
//   tampered  one payload bit flipped on the wire (FAKE_IB_FLIP) under SZ_AUTH_DATA=1: the receive
//             fails with szCorruptFrame and the sender does not succeed silently
#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "splitzip.h"

namespace {

int failures = 0;

void fail(const std::string& why) {
  fprintf(stderr, "FAIL: %s\n", why.c_str());
  ++failures;
}

// KV-shaped BF16: normal values scaled like attention keys, as BF16 bit patterns.
std::vector<uint16_t> kv(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, 1.5f);
  std::vector<uint16_t> v(n);
  for (uint16_t& x : v) {
    float f = d(rng);
    uint32_t w;
    memcpy(&w, &f, 4);
    x = uint16_t(w >> 16);
  }
  return v;
}

// Runs body(rank, comm) on `nranks` ranks as threads over SZ_WIRE=ib; init results in `init`.
void onRanks(int nranks, int codec, int timeoutMs, const std::function<void(int, szComm_t)>& body, szResult_t* init) {
  szUniqueId id;
  if (szGetUniqueId(&id) != szSuccess) {
    fail(std::string("szGetUniqueId: ") + szGetLastError(nullptr));
    return;
  }
  std::vector<std::thread> ranks;
  for (int r = 0; r < nranks; ++r)
    ranks.emplace_back([&, r] {
      szConfig_t cfg = SZ_CONFIG_INITIALIZER;
      cfg.wire = "ib";
      cfg.codec = codec;
      cfg.timeoutMs = timeoutMs;
      szComm_t comm = nullptr;
      init[r] = szCommInitRankConfig(&comm, nranks, id, r, &cfg);
      if (init[r] != szSuccess) {
        fprintf(stderr, "rank %d: init: %s\n", r, szGetLastError(nullptr));
        return;
      }
      body(r, comm);
      szCommDestroy(comm);
    });
  for (std::thread& t : ranks) t.join();
}

void twoRanks(int codec, int timeoutMs, const std::function<void(int, szComm_t)>& body, szResult_t init[2]) {
  onRanks(2, codec, timeoutMs, body, init);
}

// The fake NIC's count of landed slots and their bytes (tests/ib_fake/fake_verbs.cc).
void nicCounters(uint64_t* writes, uint64_t* bytes) {
  *writes = *bytes = 0;
  void* lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);  // the one the wire opens too
  auto counters = lib ? reinterpret_cast<void (*)(uint64_t*, uint64_t*)>(dlsym(lib, "fake_ib_counters")) : nullptr;
  if (counters == nullptr) fail("libibverbs.so.1 is not the fake NIC (LD_LIBRARY_PATH?)");
  else counters(writes, bytes);
}

void bits() {
  const size_t sizes[] = {0, 1, 1000, 131073, (size_t(4) << 20) / 2 + 3, (size_t(16) << 20) / 2};
  uint64_t total = 0;  // BF16 bytes both ranks send per codec mode
  for (size_t n : sizes) total += 2 * 2 * n;
  for (int codec : {SZ_CODEC_OFF, SZ_CODEC_ON}) {
    uint64_t writes0, bytes0, writes1, bytes1;
    nicCounters(&writes0, &bytes0);
    szResult_t init[2] = {szInternalError, szInternalError};
    twoRanks(codec, 20000, [&](int r, szComm_t comm) {
      for (size_t n : sizes) {
        const std::vector<uint16_t> mine = kv(n, unsigned(7 * n + r)), theirs = kv(n, unsigned(7 * n + 1 - r));
        std::vector<uint16_t> got(n, 0xA5A5);
        szGroupStart();
        szResult_t s = szSend(mine.data(), n, szBfloat16, 1 - r, comm, nullptr);
        szResult_t v = szRecv(got.data(), n, szBfloat16, 1 - r, comm, nullptr);
        szResult_t g = szGroupEnd();
        if (s != szSuccess || v != szSuccess || g != szSuccess) {
          fail("rank " + std::to_string(r) + " exchange of " + std::to_string(n) + " elements: " + szGetLastError(comm));
          return;
        }
        if (got != theirs) fail("rank " + std::to_string(r) + ": " + std::to_string(n) + " elements arrived changed");
      }
      szStats_t st = SZ_STATS_INITIALIZER;
      if (szCommGetStats(comm, &st) != szSuccess) fail("szCommGetStats");
      const bool compressed = st.wireBytes < st.rawBytes;
      if (st.rawBytes == 0 || compressed != (codec == SZ_CODEC_ON))
        fail("rank " + std::to_string(r) + " codec " + std::to_string(codec) + ": " + std::to_string(st.rawBytes) +
             " bytes sent as " + std::to_string(st.wireBytes) + " on the wire");
    }, init);
    if (init[0] != szSuccess || init[1] != szSuccess) fail("init on the fake NIC");
    // Every byte crossed the NIC as RDMA writes into the peer's slots: the payloads (fewer with
    // the codec) and a slot header each.
    nicCounters(&writes1, &bytes1);
    const uint64_t writes = writes1 - writes0, bytes = bytes1 - bytes0;
    printf("codec %d: %llu slots, %llu bytes over the NIC for %llu bytes sent\n", codec, (unsigned long long)writes,
           (unsigned long long)bytes, (unsigned long long)total);
    if (writes == 0 || (codec == SZ_CODEC_OFF ? bytes < total : bytes >= total))
      fail("the NIC moved " + std::to_string(bytes) + " bytes for " + std::to_string(total));
  }
}

void mismatch() {
  szResult_t init[2] = {szInternalError, szInternalError};
  szResult_t res[2] = {szSuccess, szSuccess};
  twoRanks(SZ_CODEC_ON, 10000, [&](int r, szComm_t comm) {
    std::vector<uint16_t> buf = kv(1000, 1);
    res[r] = r == 0 ? szSend(buf.data(), 1000, szBfloat16, 1, comm, nullptr)
                    : szRecv(buf.data(), 999, szBfloat16, 0, comm, nullptr);
  }, init);
  if (init[0] != szSuccess || init[1] != szSuccess) fail("init on the fake NIC");
  for (int r = 0; r < 2; ++r)
    if (res[r] != szInvalidUsage)
      fail("rank " + std::to_string(r) + ": a count mismatch gave " + szGetErrorString(res[r]));
}

void gone() {
  szResult_t init[2] = {szInternalError, szInternalError};
  szResult_t res = szSuccess;
  double seconds = 0;
  twoRanks(SZ_CODEC_ON, 20000, [&](int r, szComm_t comm) {
    std::vector<uint16_t> buf = kv(4096, 1);
    // First contact (the pair connects), then rank 1 leaves while rank 0 waits for more.
    szResult_t first = r == 0 ? szRecv(buf.data(), 4096, szBfloat16, 1, comm, nullptr)
                              : szSend(buf.data(), 4096, szBfloat16, 0, comm, nullptr);
    if (first != szSuccess) fail("first exchange: " + std::string(szGetLastError(comm)));
    if (r == 1) return;  // destroyed by twoRanks
    const auto t0 = std::chrono::steady_clock::now();
    res = szRecv(buf.data(), 4096, szBfloat16, 1, comm, nullptr);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }, init);
  if (init[0] != szSuccess || init[1] != szSuccess) fail("init on the fake NIC");
  if (res != szRemoteError) fail(std::string("a receive from a departed peer gave ") + szGetErrorString(res));
  if (seconds > 10) fail("the departed peer was seen after " + std::to_string(seconds) + " s");
}

void tampered() {
  szResult_t init[2] = {szInternalError, szInternalError};
  szResult_t res[2] = {szSuccess, szSuccess};
  twoRanks(SZ_CODEC_OFF, 10000, [&](int r, szComm_t comm) {
    const size_t n = size_t(1) << 20;  // 2 MiB: several slots
    std::vector<uint16_t> buf = kv(n, 3);
    res[r] = r == 0 ? szSend(buf.data(), n, szBfloat16, 1, comm, nullptr)
                    : szRecv(buf.data(), n, szBfloat16, 0, comm, nullptr);
  }, init);
  if (init[0] != szSuccess || init[1] != szSuccess) fail("init on the fake NIC");
  if (res[1] != szCorruptFrame) fail(std::string("a tampered slot gave the receiver ") + szGetErrorString(res[1]));
  if (res[0] == szSuccess) fail("the sender of a tampered transfer succeeded");
}

// Three ranks in a ring, both ways in one group: each rank connects its two peers at once.
void three() {
  szResult_t init[3] = {szInternalError, szInternalError, szInternalError};
  onRanks(3, SZ_CODEC_ON, 20000, [&](int r, szComm_t comm) {
    const size_t n = (size_t(3) << 20) / 2 + 7;
    const int next = (r + 1) % 3, prev = (r + 2) % 3;
    const std::vector<uint16_t> mine = kv(n, unsigned(r));
    std::vector<uint16_t> fromPrev(n), fromNext(n);
    szGroupStart();
    szSend(mine.data(), n, szBfloat16, next, comm, nullptr);
    szSend(mine.data(), n, szBfloat16, prev, comm, nullptr);
    szRecv(fromPrev.data(), n, szBfloat16, prev, comm, nullptr);
    szRecv(fromNext.data(), n, szBfloat16, next, comm, nullptr);
    if (szGroupEnd() != szSuccess) {
      fail("rank " + std::to_string(r) + ": ring exchange: " + szGetLastError(comm));
      return;
    }
    if (fromPrev != kv(n, unsigned(prev)) || fromNext != kv(n, unsigned(next)))
      fail("rank " + std::to_string(r) + ": the ring's data arrived changed");
  }, init);
  for (int r = 0; r < 3; ++r)
    if (init[r] != szSuccess) fail("init on the fake NIC");
}

void chain() {
  szResult_t init[3] = {szInternalError, szInternalError, szInternalError};
  const size_t n = 100003;
  onRanks(3, SZ_CODEC_ON, 10000, [&](int r, szComm_t comm) {
    std::vector<uint16_t> a(n), b(n);
    szResult_t res = szSuccess;
    if (r == 0) {
      const std::vector<uint16_t> to1 = kv(n, 1), to2 = kv(n, 2);
      szGroupStart();
      szSend(to1.data(), n, szBfloat16, 1, comm, nullptr);
      szSend(to2.data(), n, szBfloat16, 2, comm, nullptr);
      res = szGroupEnd();
    } else if (r == 1) {
      res = szRecv(a.data(), n, szBfloat16, 0, comm, nullptr);
      if (res == szSuccess && a != kv(n, 1)) fail("rank 1: rank 0's data arrived changed");
      const std::vector<uint16_t> to2 = kv(n, 12);
      if (res == szSuccess) res = szSend(to2.data(), n, szBfloat16, 2, comm, nullptr);
    } else {
      res = szRecv(a.data(), n, szBfloat16, 1, comm, nullptr);
      if (res == szSuccess) res = szRecv(b.data(), n, szBfloat16, 0, comm, nullptr);
      if (res == szSuccess && (a != kv(n, 12) || b != kv(n, 2))) fail("rank 2: the data arrived changed");
    }
    if (res != szSuccess) fail("rank " + std::to_string(r) + ": " + szGetLastError(comm));
  }, init);
  for (int r = 0; r < 3; ++r)
    if (init[r] != szSuccess) fail("init on the fake NIC");
}

void down() {
  szResult_t init[2] = {szSuccess, szSuccess};
  twoRanks(SZ_CODEC_ON, 5000, [](int, szComm_t) {}, init);
  if (init[0] != szInvalidUsage || init[1] != szInvalidUsage)
    fail(std::string("init with the port down gave ") + szGetErrorString(init[0]) + " / " + szGetErrorString(init[1]));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "bits" || mode == "sealed") bits();
  else if (mode == "mismatch") mismatch();
  else if (mode == "gone") gone();
  else if (mode == "down") down();
  else if (mode == "tampered") tampered();
  else if (mode == "three") three();
  else if (mode == "chain") chain();
  else {
    fprintf(stderr, "usage: %s bits|sealed|mismatch|gone|down|tampered|three|chain\n", argv[0]);
    return 2;
  }
  if (failures == 0) printf("PASS %s\n", mode.c_str());
  return failures == 0 ? 0 : 1;
}
