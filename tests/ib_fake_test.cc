// The ib wire end to end on a NIC emulated inside one process (tests/ib_fake/): host buffers over
// the wire's host slots, two ranks as threads, with no GPU and no RDMA hardware. The program
// tests/ib_fake/ib_host_app.cc runs each scenario with the fake libibverbs.so.1 first on
// LD_LIBRARY_PATH (the wire opens libibverbs at run time). `make test` names both
// (SZ_TEST_IB_FAKE_APP, SZ_TEST_IB_FAKE_DIR); a build without the ib wire skips these tests.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "child_run.h"

namespace {

sztest::ChildRun run(const std::string& mode, const std::string& env = "") {
  const std::string cmd = std::string("env -u SZ_CODEC -u SZ_WIRE -u SZ_ENCRYPT -u SZ_AUTH_DATA SZ_SOCKET_IFNAME=lo ") +
                          "LD_LIBRARY_PATH=" + getenv("SZ_TEST_IB_FAKE_DIR") + " " + env + " timeout 120 " +
                          getenv("SZ_TEST_IB_FAKE_APP") + " " + mode + " 2>&1";
  return sztest::runChild(cmd);
}

#define SKIP_WITHOUT_FAKE_NIC()                                                 \
  if (getenv("SZ_TEST_IB_FAKE_APP") == nullptr || getenv("SZ_TEST_IB_FAKE_DIR") == nullptr) \
  GTEST_SKIP() << "SKIPPED: no ib wire in this build (CUDA=0 or no rdma-core headers), or not run by make test"

void expectPass(const std::string& mode, const std::string& env = "") {
  const sztest::ChildRun r = run(mode, env);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("PASS " + mode), std::string::npos) << r.out;
}

TEST(IbFakeNic, HostBuffersCrossAsRdmaWritesBitExact) {
  SKIP_WITHOUT_FAKE_NIC();
  expectPass("bits");
}

TEST(IbFakeNic, ThreeRanksExchangeWithBothNeighboursAtOnce) {
  SKIP_WITHOUT_FAKE_NIC();
  expectPass("three");
}

// SZ_RUNTIME_CONNECT=0 connects every host link at init, so first operations in an order that
// lazy connections would wait on in a circle run through.
TEST(IbFakeNic, ConnectingAtInitServesAnyOrderOfFirstOperations) {
  SKIP_WITHOUT_FAKE_NIC();
  expectPass("chain", "SZ_RUNTIME_CONNECT=0");
}

TEST(IbFakeNic, AnAllIbCommunicatorOpensNoTcpConnections) {
  // Every pair's host buffers ride ib's host links: the slot proxy's tcp host channel and its
  // control connections are not opened at all (the tcp wire logs each connect at INFO).
  SKIP_WITHOUT_FAKE_NIC();
  const sztest::ChildRun r = run("three", "SZ_DEBUG=INFO");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("ib wire: rank 2"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("tcp: rank"), std::string::npos) << r.out;
}

TEST(IbFakeNic, EncryptedHostSlotsCrossBitExact) {
  SKIP_WITHOUT_FAKE_NIC();
  expectPass("sealed", "SZ_ENCRYPT=1");
}

TEST(IbFakeNic, CountMismatchIsInvalidUsageOnBothRanks) {
  SKIP_WITHOUT_FAKE_NIC();
  expectPass("mismatch");
}

TEST(IbFakeNic, DepartedPeerFailsAReceiveSoon) {
  SKIP_WITHOUT_FAKE_NIC();
  expectPass("gone");
}

TEST(IbFakeNic, BitFlippedOnTheWireIsRefusedUnderAuthData) {
  SKIP_WITHOUT_FAKE_NIC();
  expectPass("tampered", "SZ_AUTH_DATA=1 FAKE_IB_FLIP=3");
}

TEST(IbFakeNic, PortDownFailsInitOnEveryRank) {
  SKIP_WITHOUT_FAKE_NIC();
  expectPass("down", "FAKE_IB_PORT_STATE=down");
}

}  // namespace
