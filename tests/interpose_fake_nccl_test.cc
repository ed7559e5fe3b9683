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

namespace {

struct Run {
  std::string out;  // stdout and stderr
  int status = -1;
};

const char* interposer() { return getenv("SZ_TEST_INTERPOSER"); }
const char* app() { return getenv("SZ_TEST_FAKE_APP"); }

#define SKIP_WITHOUT_INTERPOSER()                                                              \
  if (interposer() == nullptr || app() == nullptr)                                             \
  GTEST_SKIP() << "SKIPPED: no interposer in this build (CUDA=0, or not run by make test)"

Run run(const std::string& mode, const std::string& env, bool preload = true) {
  std::string cmd = "env -u SZ_CODEC -u SZ_INTERPOSE -u SZ_AUTO_MIN_BYTES CUDA_VISIBLE_DEVICES= SZ_DEBUG=INFO " + env +
                    (preload ? std::string(" LD_PRELOAD=") + interposer() : std::string()) + " timeout 60 " + app() +
                    " " + mode + " 2>&1";
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  r.status = pclose(p);
  return r;
}

bool has(const Run& r, const std::string& s) { return r.out.find(s) != std::string::npos; }

// The program's own lines ("rank N: call -> result") and the fake NCCL's log, sorted (the two
// rank threads interleave): what the program saw and what reached NCCL.
std::vector<std::string> observable(const Run& r) {
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("rank ", 0) == 0 || line.rfind("nccl", 0) == 0 || line.rfind("id tagged", 0) == 0)
      lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST(InterposeFakeNccl, ExportsOnlyTheNcclCallsItWraps) {
  SKIP_WITHOUT_INTERPOSER();
  std::string cmd = std::string("nm -D --defined-only ") + interposer() + " | awk '{print $3}' | grep -v '^$' | sort";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string names;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) names.append(buf, n);
  pclose(p);
  EXPECT_EQ(names,
            "ncclCommAbort\nncclCommDestroy\nncclCommFinalize\nncclCommGetAsyncError\nncclCommInitAll\n"
            "ncclCommInitRank\nncclCommInitRankConfig\nncclCommRevoke\nncclCommSplit\nncclGetLastError\n"
            "ncclGetUniqueId\nncclGroupEnd\nncclGroupStart\nncclRecv\nncclSend\n")
      << "SplitZip, the CUDA runtime and the pnccl forwards must stay local";
}

TEST(InterposeFakeNccl, ForwardsToTheProgramsNcclWhenNoGpu) {
  SKIP_WITHOUT_INTERPOSER();
  Run plain = run("ranks", "", false), with = run("ranks", "");
  ASSERT_EQ(plain.status, 0) << plain.out;
  ASSERT_EQ(with.status, 0) << with.out;
  EXPECT_TRUE(has(plain, "id tagged: 0"));
  EXPECT_TRUE(has(with, "id tagged: 1")) << "the id carries the handshake's tag";
  EXPECT_TRUE(has(with, "forwarding to the NCCL in ")) << with.out;
  EXPECT_TRUE(has(with, "tests/interpose/libnccl.so.2")) << "the program's NCCL, not a system one";
  EXPECT_TRUE(has(with, "szCommInitFromNccl failed")) << "the verdict was 'all': both ranks tried\n" << with.out;
  EXPECT_TRUE(has(with, "could not make its SplitZip communicator")) << with.out;
  EXPECT_TRUE(has(with, "rank 0: groupEnd(unbalanced) -> 5")) << "ncclInvalidUsage, as NCCL says";
  EXPECT_TRUE(has(with, "ncclSend rank=0 count=524288 type=9 peer=1"));
  std::vector<std::string> a = observable(plain), b = observable(with);
  a.erase(std::remove(a.begin(), a.end(), "id tagged: 0"), a.end());
  b.erase(std::remove(b.begin(), b.end(), "id tagged: 1"), b.end());
  EXPECT_EQ(a, b) << "the same calls reach NCCL with the same results\n" << with.out;
}

TEST(InterposeFakeNccl, APeerWithoutTheInterposerMeansNoSplitZip) {
  SKIP_WITHOUT_INTERPOSER();
  Run r = run("plainpeer", "");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r, "not every rank runs the interposer")) << r.out;
  EXPECT_FALSE(has(r, "szCommInitFromNccl")) << "no SplitZip communicator is even tried\n" << r.out;
  EXPECT_TRUE(has(r, "ncclSend rank=1 count=524288 type=9 peer=0"));
}

TEST(InterposeFakeNccl, DifferentSettingsMeanNoSplitZip) {
  SKIP_WITHOUT_INTERPOSER();
  // One process, so the ranks share settings; a different codec on one rank is the handshake
  // test's DifferentSettingsGiveNoToEveryRank. Here: codec off makes no SplitZip communicator.
  Run r = run("ranks", "SZ_CODEC=off");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r, "id tagged: 0")) << r.out;
  EXPECT_FALSE(has(r, "szCommInitFromNccl")) << r.out;
}

TEST(InterposeFakeNccl, SwitchedOff) {
  SKIP_WITHOUT_INTERPOSER();
  Run off = run("ranks", "SZ_INTERPOSE=0"), plain = run("ranks", "", false);
  ASSERT_EQ(off.status, 0) << off.out;
  EXPECT_TRUE(has(off, "id tagged: 0"));
  EXPECT_FALSE(has(off, "SplitZip interposer:")) << "SZ_INTERPOSE=0: nothing of the interposer runs\n" << off.out;
  EXPECT_EQ(observable(off), observable(plain));
  Run bad = run("ranks", "SZ_INTERPOSE=maybe");
  EXPECT_TRUE(has(bad, "SZ_INTERPOSE")) << "an invalid value is named on stderr\n" << bad.out;
  EXPECT_TRUE(has(bad, "id tagged: 1")) << "and the default (on) is used";
}

TEST(InterposeFakeNccl, InitsInsideAGroupAttachAtItsEnd) {
  SKIP_WITHOUT_INTERPOSER();
  Run r = run("groupinit", "");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r, "rank 0: groupEnd -> 0")) << r.out;
  EXPECT_TRUE(has(r, "rank 1: groupEnd -> 0")) << r.out;
  EXPECT_TRUE(has(r, "szCommInitFromNccl failed")) << "the verdict came after NCCL ran the inits\n" << r.out;
  EXPECT_TRUE(has(r, "ncclCommInitRankConfig blocking=1"));
}

TEST(InterposeFakeNccl, NonBlockingCommunicatorsAreForwarded) {
  SKIP_WITHOUT_INTERPOSER();
  Run r = run("nonblocking", "");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r, "non-blocking communicator: forwarded")) << r.out;
  EXPECT_FALSE(has(r, "szCommInitFromNccl")) << r.out;
}

TEST(InterposeFakeNccl, SplitAbortRevokeAndInitAllReachNccl) {
  SKIP_WITHOUT_INTERPOSER();
  Run split = run("split", "");
  ASSERT_EQ(split.status, 0) << split.out;
  EXPECT_TRUE(has(split, "rank 0: child made"));
  EXPECT_TRUE(has(split, "rank 1: child none")) << "NCCL_SPLIT_NOCOLOR";
  EXPECT_TRUE(has(split, "ncclCommSplit color=-1 key=1"));
  EXPECT_TRUE(has(split, "ncclCommAbort rank=1"));
  Run all = run("initall", "");
  ASSERT_EQ(all.status, 0) << all.out;
  EXPECT_TRUE(has(all, "ncclCommInitAll ndev=2"));
  EXPECT_TRUE(has(all, "ncclCommRevoke rank=0 flags=0"));
  EXPECT_TRUE(has(all, "ncclCommDestroy rank=1"));
  EXPECT_TRUE(has(all, "szCommInitFromNccl failed")) << "one process: attached without a handshake\n" << all.out;
}

}  // namespace
