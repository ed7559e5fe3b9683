// The interposer's handshake (interpose/handshake.h): the unique id's tag, and the registrar's
// verdict for ranks (threads here) that register, init and report.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "interpose/handshake.h"

namespace {

using szi::HandshakeClient;
using szi::IdTag;

constexpr int kTimeoutMs = 10000;

IdTag registrar() {
  IdTag tag;
  EXPECT_EQ(startRegistrar(&tag), szSuccess) << szGetLastError(nullptr);
  return tag;
}

std::shared_ptr<HandshakeClient> join(const IdTag& tag, int rank, int nranks, uint64_t digest = 7) {
  std::shared_ptr<HandshakeClient> c;
  szResult_t r = HandshakeClient::join(tag, rank, nranks, digest, kTimeoutMs, &c);
  EXPECT_EQ(r, szSuccess) << szGetLastError(nullptr);
  return c;
}

bool verdict(const std::shared_ptr<HandshakeClient>& c, bool ok = true) {
  bool all = true;
  EXPECT_EQ(c->finish(ok, &all), szSuccess) << szGetLastError(nullptr);
  return all;
}

TEST(InterposeHandshake, TagRoundTripsInTheIdTail) {
  char id[szi::kIdBytes] = {};
  memcpy(id, "nccl's own 36 bytes", 19);
  IdTag in;
  memset(&in, 0, sizeof(in));
  in.registrar.sin.sin_family = AF_INET;
  in.registrar.sin.sin_port = htons(4242);
  for (size_t i = 0; i < szi::kIdKeyBytes; ++i) in.key[i] = uint8_t(i * 7 + 1);
  IdTag out;
  EXPECT_FALSE(szi::idTagRead(id, &out)) << "an untagged id";
  EXPECT_TRUE(szi::idTagFits(id));
  ASSERT_TRUE(szi::idTagWrite(id, in));
  EXPECT_EQ(memcmp(id, "nccl's own 36 bytes", 19), 0) << "NCCL's part is untouched";
  ASSERT_TRUE(szi::idTagRead(id, &out));
  EXPECT_EQ(memcmp(out.key, in.key, sizeof(in.key)), 0);
  EXPECT_EQ(out.registrar.sin.sin_port, htons(4242));
  char used[szi::kIdBytes] = {};
  used[100] = 1;
  EXPECT_FALSE(szi::idTagFits(used)) << "an NCCL that uses the tail";
  EXPECT_FALSE(szi::idTagWrite(used, in));
  EXPECT_EQ(used[100], 1);
}

TEST(InterposeHandshake, AllRanksRegisteredGivesAll) {
  IdTag tag = registrar();
  const int n = 3;
  std::vector<std::shared_ptr<HandshakeClient>> clients;
  for (int r = 0; r < n; ++r) clients.push_back(join(tag, r, n));
  std::vector<int> all(n, -1);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { all[size_t(r)] = verdict(clients[size_t(r)]); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) EXPECT_EQ(all[size_t(r)], 1) << "rank " << r;
}

TEST(InterposeHandshake, AMissingRankGivesNo) {
  IdTag tag = registrar();
  auto c0 = join(tag, 0, 2);  // rank 1 runs without the interposer: it never registers
  EXPECT_FALSE(verdict(c0));
}

TEST(InterposeHandshake, DifferentSettingsGiveNoToEveryRank) {
  IdTag tag = registrar();
  auto c0 = join(tag, 0, 2, 7), c1 = join(tag, 1, 2, 8);
  EXPECT_FALSE(verdict(c0));
  EXPECT_FALSE(verdict(c1)) << "the same verdict for every rank";
}

TEST(InterposeHandshake, AFailedInitGivesNo) {
  IdTag tag = registrar();
  auto c0 = join(tag, 0, 2), c1 = join(tag, 1, 2);
  EXPECT_FALSE(verdict(c1, false));
  EXPECT_FALSE(verdict(c0, true)) << "decided at the first report";
}

TEST(InterposeHandshake, ARankThatLeavesBeforeItsReportGivesNo) {
  IdTag tag = registrar();
  auto c0 = join(tag, 0, 2);
  auto c1 = join(tag, 1, 2);
  c1.reset();  // its process died between registering and reporting
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(verdict(c0));
}

TEST(InterposeHandshake, RefusesWrongKeyDuplicateRankAndBadRank) {
  IdTag tag = registrar();
  IdTag forged = tag;
  forged.key[0] ^= 1;
  std::shared_ptr<HandshakeClient> c;
  EXPECT_NE(HandshakeClient::join(forged, 0, 2, 7, kTimeoutMs, &c), szSuccess) << "a key not from the id";
  auto c0 = join(tag, 0, 2);
  EXPECT_NE(HandshakeClient::join(tag, 0, 2, 7, kTimeoutMs, &c), szSuccess) << "rank 0 twice";
  EXPECT_NE(HandshakeClient::join(tag, 2, 2, 7, kTimeoutMs, &c), szSuccess) << "rank out of range";
  auto c1 = join(tag, 1, 2);
  EXPECT_TRUE(verdict(c0)) << "refused strangers change nothing";
  EXPECT_TRUE(verdict(c1));
}

TEST(InterposeHandshake, NoRegistrarFailsWithinTheConnectDeadline) {
  IdTag tag = registrar();
  tag.registrar.sin.sin_port = 0;  // nobody listens at port 0
  if (tag.registrar.sa.sa_family == AF_INET6) tag.registrar.sin6.sin6_port = 0;
  std::shared_ptr<HandshakeClient> c;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_NE(HandshakeClient::join(tag, 0, 2, 7, kTimeoutMs, &c), szSuccess);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(8)) << "bounded by the connect deadline";
}

}  // namespace
