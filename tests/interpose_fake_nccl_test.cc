// The interposer (build/lib/libsplitzip_nccl.so) preloaded into a program on a fake NCCL
// (tests/interpose/): what it exports, where it forwards, the handshake's verdicts, groups,
// inits in groups, splits, SZ_INTERPOSE=0. No GPU is visible to the program (CUDA_VISIBLE_DEVICES
// is empty), so no SplitZip communicator can be made: every verdict ends with the communicator
// forwarded, and the calls that reach the fake NCCL must be exactly those of the program run
// without the interposer. Data through SplitZip needs two GPUs: tests/interpose/torch_p2p.py.
// `make test` names the interposer and the program (SZ_TEST_INTERPOSER, SZ_TEST_FAKE_APP); a
// build without CUDA has no interposer and these tests skip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "child_run.h"

namespace {

using AppRun = sztest::ChildRun;

const char* interposer() { return getenv("SZ_TEST_INTERPOSER"); }
const char* app() { return getenv("SZ_TEST_FAKE_APP"); }

#define SKIP_WITHOUT_INTERPOSER()                                                              \
  if (interposer() == nullptr || app() == nullptr)                                             \
  GTEST_SKIP() << "SKIPPED: no interposer in this build (CUDA=0, or not run by make test)"

AppRun run(const std::string& mode, const std::string& env, bool preload = true) {
  std::string cmd = "env -u SZ_CODEC -u SZ_INTERPOSE -u SZ_AUTO_MIN_BYTES CUDA_VISIBLE_DEVICES= SZ_DEBUG=INFO " + env +
                    (preload ? std::string(" LD_PRELOAD=") + interposer() : std::string()) + " timeout 60 " + app() +
                    " " + mode + " 2>&1";
  return sztest::runChild(cmd);
}

bool has(const AppRun& r, const std::string& s) { return r.out.find(s) != std::string::npos; }

// Runs `mode` with the interposer; it must exit 0 and its output hold every `present` string
// and no `absent` one.
AppRun expectRun(const std::string& mode, const std::string& env, const std::vector<std::string>& present,
              const std::vector<std::string>& absent) {
  AppRun r = run(mode, env);
  EXPECT_EQ(r.status, 0) << mode << " " << env << "\n" << r.out;
  for (const std::string& want : present) EXPECT_TRUE(has(r, want)) << "missing: " << want << "\n" << r.out;
  for (const std::string& not_ : absent) EXPECT_FALSE(has(r, not_)) << "unexpected: " << not_ << "\n" << r.out;
  return r;
}

// The program's own lines ("rank N: call -> result") and the fake NCCL's log, sorted (the two
// rank threads interleave): what the program saw and what reached NCCL.
std::vector<std::string> observable(const AppRun& r) {
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("rank ", 0) == 0 || line.rfind("nccl", 0) == 0 || line.rfind("id tagged", 0) == 0)
      lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST(InterposeFakeNccl, ExportsNcclsHostApiAndNothingElse) {
  SKIP_WITHOUT_INTERPOSER();
  std::string cmd = std::string("nm -D --defined-only ") + interposer() + " | awk '{print $3}' | grep -v '^$' | sort";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string names;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) names.append(buf, n);
  pclose(p);
  // NCCL 2.28's host API: the calls the interposer wraps and those it forwards (interpose/forward.cc),
  // so that a program loading it as its NCCL (VLLM_NCCL_SO_PATH) finds every one;
  // tests/interpose/pynccl_ctypes_test.py checks the list against the nccl.h of the build.
  EXPECT_EQ(names,
            "ncclAllGather\nncclAllReduce\nncclAlltoAll\nncclBcast\nncclBroadcast\nncclCommAbort\nncclCommCount\n"
            "ncclCommCuDevice\nncclCommDeregister\nncclCommDestroy\nncclCommFinalize\nncclCommGetAsyncError\n"
            "ncclCommInitAll\nncclCommInitRank\nncclCommInitRankConfig\nncclCommInitRankScalable\nncclCommRegister\n"
            "ncclCommRevoke\nncclCommShrink\nncclCommSplit\nncclCommUserRank\nncclCommWindowDeregister\n"
            "ncclCommWindowRegister\nncclGather\nncclGetErrorString\nncclGetLastError\nncclGetUniqueId\nncclGetVersion\n"
            "ncclGroupEnd\nncclGroupSimulateEnd\nncclGroupStart\nncclMemAlloc\nncclMemFree\nncclRecv\n"
            "ncclRedOpCreatePreMulSum\nncclRedOpDestroy\nncclReduce\nncclReduceScatter\nncclScatter\nncclSend\n")
      << "SplitZip, the CUDA runtime and the pnccl forwards must stay local";
}

TEST(InterposeFakeNccl, ForwardsToTheProgramsNcclWhenNoGpu) {
  SKIP_WITHOUT_INTERPOSER();
  AppRun plain = run("ranks", "", false);
  EXPECT_EQ(plain.status, 0) << plain.out;
  EXPECT_TRUE(has(plain, "id tagged: 0"));
  // The id carries the handshake's tag; the NCCL found is the program's, not a system one; the
  // verdict was "all" (both ranks tried szCommInitFromNccl, which has no GPU here); an
  // unbalanced ncclGroupEnd is ncclInvalidUsage, as NCCL says.
  AppRun with = expectRun("ranks", "", {"id tagged: 1", "forwarding to the NCCL in ", "tests/interpose/libnccl.so.2",
                                     "szCommInitFromNccl failed", "could not make its SplitZip communicator",
                                     "rank 0: groupEnd(unbalanced) -> 5", "ncclSend rank=0 count=524288 type=9 peer=1"},
                       {});
  std::vector<std::string> a = observable(plain), b = observable(with);
  a.erase(std::remove(a.begin(), a.end(), "id tagged: 0"), a.end());
  b.erase(std::remove(b.begin(), b.end(), "id tagged: 1"), b.end());
  EXPECT_EQ(a, b) << "the same calls reach NCCL with the same results\n" << with.out;
}

TEST(InterposeFakeNccl, APeerWithoutTheInterposerMeansNoSplitZip) {
  SKIP_WITHOUT_INTERPOSER();
  // No SplitZip communicator is even tried: "szCommInitFromNccl" never appears.
  expectRun("plainpeer", "", {"not every rank runs the interposer", "ncclSend rank=1 count=524288 type=9 peer=0"},
            {"szCommInitFromNccl"});
}

TEST(InterposeFakeNccl, CodecOffMakesNoSplitZipCommunicator) {
  SKIP_WITHOUT_INTERPOSER();
  // One process, so its ranks share settings; ranks with different settings are the handshake
  // test's DifferentSettingsGiveNoToEveryRank.
  expectRun("ranks", "SZ_CODEC=off", {"id tagged: 0"}, {"szCommInitFromNccl"});
}

TEST(InterposeFakeNccl, SwitchedOff) {
  SKIP_WITHOUT_INTERPOSER();
  // SZ_INTERPOSE=0: no tag, no registrar or rendezvous socket, no SplitZip communicator, and
  // NCCL sees what it sees without the interposer.
  AppRun off = expectRun("ranks", "SZ_INTERPOSE=0", {"id tagged: 0"}, {"listening on", "szCommInitFromNccl"});
  EXPECT_EQ(observable(off), observable(run("ranks", "", false)));
  // An invalid value is named on stderr, and the default (on) is used.
  expectRun("ranks", "SZ_INTERPOSE=maybe", {"SZ_INTERPOSE", "id tagged: 1"}, {});
}

TEST(InterposeFakeNccl, InitsInsideAGroupAttachAtItsEnd) {
  SKIP_WITHOUT_INTERPOSER();
  // The verdict ("all": both tried szCommInitFromNccl) came after NCCL ran the deferred inits.
  expectRun("groupinit", "", {"rank 0: groupEnd -> 0", "rank 1: groupEnd -> 0", "szCommInitFromNccl failed",
                              "ncclCommInitRankConfig blocking=1"}, {});
}

TEST(InterposeFakeNccl, NonBlockingCommunicatorsAreForwarded) {
  SKIP_WITHOUT_INTERPOSER();
  expectRun("nonblocking", "", {"non-blocking communicator: forwarded"}, {"szCommInitFromNccl"});
}

TEST(InterposeFakeNccl, SplitAbortRevokeAndInitAllReachNccl) {
  SKIP_WITHOUT_INTERPOSER();
  expectRun("split", "", {"rank 0: child made", "rank 1: child none", "ncclCommSplit color=-1 key=1",
                          "ncclCommAbort rank=1"}, {});
  // One process holds both ranks: attached without a handshake.
  expectRun("initall", "", {"ncclCommInitAll ndev=2", "ncclCommRevoke rank=0 flags=0", "ncclCommDestroy rank=1",
                            "szCommInitFromNccl failed"}, {});
}

}  // namespace
