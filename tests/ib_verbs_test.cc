// The ib wire's parts that need rdma-core's headers, on a machine without an RDMA NIC: the
// dlopen loader (a missing library, a library without the verbs, the real libibverbs where it
// is installed), the work-completion status mapping, port selection finding no device, and the
// wire's connect failing cleanly on every rank at once; SZ_WIRE=ib failing at init. Built where
// the headers are (SZ_HAVE_IBVERBS); the tests that need the absence of NICs skip where one is.
#include <gtest/gtest.h>

#if SZ_HAVE_IBVERBS

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "base/bootstrap.h"
#include "transport/ib_devices.h"
#include "transport/ib_loader.h"
#include "transport/ib_status.h"
#include "transport/wire.h"

namespace {

std::string lastError() { return szGetLastError(nullptr); }

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// Whether libibverbs is installed and lists a device (then the no-device tests skip).
int deviceCount(bool* loaded) {
  const szIbVerbs* v = nullptr;
  *loaded = szIbVerbsGet(&v) == szSuccess;
  if (!*loaded) return 0;
  int n = 0;
  ibv_device** list = v->getDeviceList(&n);
  if (list) v->freeDeviceList(list);
  return list ? n : 0;
}

TEST(IbLoader, MissingLibraryIsAClearError) {
  szIbVerbs v;
  EXPECT_EQ(szIbLoadVerbs("libibverbs-not-installed.so.1", &v), szSystemError);
  EXPECT_TRUE(contains(lastError(), "libibverbs-not-installed.so.1")) << lastError();
  EXPECT_TRUE(contains(lastError(), "apt-get install libibverbs1")) << lastError();
  EXPECT_EQ(v.getDeviceList, nullptr) << "nothing half-loaded";
}

TEST(IbLoader, LibraryWithoutTheVerbsIsRefused) {
  szIbVerbs v;
  EXPECT_EQ(szIbLoadVerbs("libm.so.6", &v), szSystemError);
  EXPECT_TRUE(contains(lastError(), "has no ibv_get_device_list")) << lastError();
  EXPECT_EQ(v.openDevice, nullptr);
}

TEST(IbLoader, RealLibraryLoadsOnce) {
  const szIbVerbs* a = nullptr;
  const szIbVerbs* b = nullptr;
  const szResult_t first = szIbVerbsGet(&a);
  if (first != szSuccess) {
    EXPECT_EQ(first, szSystemError);
    EXPECT_TRUE(contains(lastError(), "libibverbs.so.1")) << lastError();
    GTEST_SKIP() << "libibverbs.so.1 is not installed here: " << lastError();
  }
  ASSERT_EQ(szIbVerbsGet(&b), szSuccess);
  EXPECT_EQ(a, b);
  EXPECT_NE(a->getDeviceList, nullptr);
  EXPECT_NE(a->queryPort, nullptr);
  EXPECT_STREQ(a->wcStatusStr(IBV_WC_RETRY_EXC_ERR), "transport retry counter exceeded");
}

TEST(IbStatus, CompletionErrorsMapLikeTheTcpWire) {
  EXPECT_EQ(szIbWcResult(IBV_WC_SUCCESS), szSuccess);
  for (ibv_wc_status s : {IBV_WC_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_INV_REQ_ERR,
                          IBV_WC_REM_OP_ERR, IBV_WC_REM_ABORT_ERR, IBV_WC_WR_FLUSH_ERR, IBV_WC_RESP_TIMEOUT_ERR,
                          IBV_WC_BAD_RESP_ERR})
    EXPECT_EQ(szIbWcResult(s), szRemoteError) << s;
  for (ibv_wc_status s : {IBV_WC_LOC_LEN_ERR, IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOC_PROT_ERR, IBV_WC_MW_BIND_ERR,
                          IBV_WC_LOC_ACCESS_ERR})
    EXPECT_EQ(szIbWcResult(s), szInternalError) << s;
  EXPECT_EQ(szIbWcResult(IBV_WC_FATAL_ERR), szSystemError);
  EXPECT_EQ(szIbWcResult(IBV_WC_GENERAL_ERR), szSystemError);
  EXPECT_TRUE(contains(szIbWcReason(IBV_WC_RETRY_EXC_ERR), "stopped answering"));
  EXPECT_TRUE(contains(szIbWcReason(IBV_WC_REM_ACCESS_ERR), "it closed"));
  EXPECT_TRUE(contains(szIbWcReason(IBV_WC_WR_FLUSH_ERR), "already failed"));
  EXPECT_TRUE(contains(szIbWcReason(IBV_WC_LOC_PROT_ERR), "bug"));
}

TEST(IbDevices, NoDeviceIsOneClearError) {
  bool loaded = false;
  if (deviceCount(&loaded) > 0 || !loaded) GTEST_SKIP() << "needs libibverbs and no RDMA device";
  const szIbVerbs* v = nullptr;
  ASSERT_EQ(szIbVerbsGet(&v), szSuccess);
  std::vector<szIbPort> ports;
  EXPECT_EQ(szIbOpenPorts(v, &ports), szInvalidUsage);
  EXPECT_TRUE(contains(lastError(), "no RDMA device")) << lastError();
  EXPECT_TRUE(contains(lastError(), "SZ_WIRE=tcp")) << lastError();
  EXPECT_TRUE(ports.empty());
}

TEST(IbDevices, MalformedHcaSpecFailsBeforeLookingForDevices) {
  bool loaded = false;
  deviceCount(&loaded);
  if (!loaded) GTEST_SKIP() << "needs libibverbs";
  const szIbVerbs* v = nullptr;
  ASSERT_EQ(szIbVerbsGet(&v), szSuccess);
  setenv("SZ_IB_HCA", "mlx5_0:0", 1);
  std::vector<szIbPort> ports;
  EXPECT_EQ(szIbOpenPorts(v, &ports), szInvalidArgument);
  unsetenv("SZ_IB_HCA");
  EXPECT_TRUE(contains(lastError(), "SZ_IB_HCA=mlx5_0:0")) << lastError();
}

#if SZ_HAVE_CUDA
// 256 KiB slices, 8 slots per (peer, direction).
szWireConfig ibConfig() {
  szWireConfig c{};
  c.timeoutMs = 20000;
  c.sliceBytes = 256 << 10;
  c.nslots = 8;
  return c;
}

// Every rank's connect fails with the same clear error, at once (not after a timeout), and
// leaves nothing behind.
TEST(IbWire, ConnectWithoutDeviceFailsOnEveryRank) {
  bool loaded = false;
  if (deviceCount(&loaded) > 0 || !loaded) GTEST_SKIP() << "needs libibverbs and no RDMA device";
  constexpr int kRanks = 2, kTimeoutMs = 20000;
  szUniqueId id;
  ASSERT_EQ(szBootstrapGetUniqueId(&id), szSuccess) << lastError();
  std::vector<szResult_t> results(kRanks, szSuccess);
  std::vector<std::string> messages(kRanks);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r)
    threads.emplace_back([&, r] {
      szBootstrap* b = nullptr;
      ASSERT_EQ(szBootstrapInit(id, r, kRanks, kTimeoutMs, &b), szSuccess) << lastError();
      void* wc = nullptr;
      results[size_t(r)] = szWireIb.connect(b, ibConfig(), &wc);
      messages[size_t(r)] = lastError();
      EXPECT_EQ(wc, nullptr);
      szBootstrapClose(b);
    });
  for (std::thread& t : threads) t.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(kTimeoutMs / 2)) << "not a timeout";
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(results[size_t(r)], szInvalidUsage) << messages[size_t(r)];
    EXPECT_TRUE(contains(messages[size_t(r)], "no RDMA device")) << messages[size_t(r)];
  }
  EXPECT_EQ(szFindWire("ib"), &szWireIb);
}
#endif

// SZ_WIRE=ib (here: szConfig_t.wire) on this machine: the init fails with one clear message,
// whichever is missing first (a GPU, or an RDMA device), on every rank.
TEST(IbWire, CommInitFailsCleanly) {
  bool loaded = false;
  if (deviceCount(&loaded) > 0) GTEST_SKIP() << "this machine has an RDMA device";
  constexpr int kRanks = 2;
  szUniqueId id;
  ASSERT_EQ(szGetUniqueId(&id), szSuccess) << lastError();
  std::vector<szResult_t> results(kRanks, szSuccess);
  std::vector<std::string> messages(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r)
    threads.emplace_back([&, r] {
      szConfig_t config = SZ_CONFIG_INITIALIZER;
      config.wire = "ib";
      config.timeoutMs = 20000;
      szComm_t comm = nullptr;
      results[size_t(r)] = szCommInitRankConfig(&comm, kRanks, id, r, &config);
      messages[size_t(r)] = lastError();
      EXPECT_EQ(comm, nullptr);
    });
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) {
#if SZ_HAVE_CUDA
    EXPECT_EQ(results[size_t(r)], szInvalidUsage) << messages[size_t(r)];
    EXPECT_TRUE(contains(messages[size_t(r)], "no RDMA device")) << messages[size_t(r)];  // with a GPU or not
#else
    EXPECT_EQ(results[size_t(r)], szInvalidArgument) << messages[size_t(r)];
#endif
    EXPECT_TRUE(contains(messages[size_t(r)], "ib")) << messages[size_t(r)];
  }
}

}  // namespace

#endif  // SZ_HAVE_IBVERBS
