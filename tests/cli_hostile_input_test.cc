// The `splitzip` tool against inputs and outputs that are not what they claim (issue 11, items
// 4 and 5): FIFOs, devices and directories as inputs, outputs and codebooks end in one error
// line within a second, never a hang; headers that would make a naive reader allocate gigabytes
// (100 MiB of nested arrays, an unclosed array, a 2 GiB sparse codebook, a 3 GiB sparse
// non-frame) end in one error line with a peak RSS measured under 256 MiB, in a child process
// whose address space is limited so that a regression fails instead of swapping.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "cli_fixture.h"

using namespace clitest;

namespace {

constexpr int kLimitSeconds = 20;             // a run still going then is killed: a hang
constexpr long kMaxRssKb = 256 * 1024;        // the issue's bound for the hostile cases
constexpr rlim_t kAddressSpace = rlim_t(2) << 30;  // the child's limit: far above the bound

struct Measured {
  int status = -1;  // exit status, or 128 + signal
  long maxRssKb = 0;
  double seconds = 0;
  std::string err;
};

class CliHostile : public Cli {
 protected:
  // Runs the CLI with `args` in a child limited to kAddressSpace, killed after kLimitSeconds;
  // its peak RSS (wait4) and wall time.
  Measured measure(const std::vector<std::string>& args) const {
    const std::string errPath = path("stderr");
    auto t0 = std::chrono::steady_clock::now();
    pid_t pid = fork();
    if (pid == 0) {
      rlimit as = {kAddressSpace, kAddressSpace};
      setrlimit(RLIMIT_AS, &as);
      int err = open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int out = open("/dev/null", O_WRONLY);
      dup2(err, 2);
      dup2(out, 1);
      std::vector<char*> argv = {const_cast<char*>(cli_.c_str())};
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(cli_.c_str(), argv.data());
      _exit(127);
    }
    Measured m;
    int status = 0;
    rusage ru = {};
    for (;;) {
      pid_t done = wait4(pid, &status, WNOHANG, &ru);
      if (done == pid) break;
      if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(kLimitSeconds)) {
        kill(pid, SIGKILL);
        wait4(pid, &status, 0, &ru);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    m.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    m.maxRssKb = ru.ru_maxrss;
    std::vector<uint8_t> e = readBytes(errPath);
    m.err.assign(e.begin(), e.end());
    return m;
  }

  static std::string joined(const std::vector<std::string>& args) {
    std::string s;
    for (const std::string& a : args) s += (s.empty() ? "" : " ") + fs::path(a).filename().string();
    return s;
  }

  // One error line that mentions `mention`, exit status 1, within a second.
  void expectQuickError(const std::vector<std::string>& args, const std::string& mention) const {
    Measured m = measure(args);
    std::string what = joined(args);
    EXPECT_EQ(m.status, 1) << what << ": " << m.err;
    EXPECT_EQ(m.err.rfind("splitzip: error: ", 0), 0u) << what << ": " << m.err;
    EXPECT_EQ(std::count(m.err.begin(), m.err.end(), '\n'), 1) << what << ": " << m.err;
    EXPECT_NE(m.err.find(mention), std::string::npos) << what << ": " << m.err;
    EXPECT_LT(m.seconds, 1.0) << what;
  }

  // The peak RSS of the tool failing on a missing file: what it takes before reading input.
  long baselineRssKb() const {
    static const long base = measure({"stats", "--dtype", "bf16", path("no-such-file")}).maxRssKb;
    return base;
  }

  // The same for a hostile file, also with the peak RSS under the bound.
  void expectBoundedError(const std::vector<std::string>& args, const std::string& mention) const {
    Measured m = measure(args);
    std::string what = joined(args);
    EXPECT_EQ(m.status, 1) << what << ": " << m.err;
    EXPECT_EQ(std::count(m.err.begin(), m.err.end(), '\n'), 1) << what << ": " << m.err;
    EXPECT_NE(m.err.find(mention), std::string::npos) << what << ": " << m.err;
    // Above what the tool takes before it reads anything (on a GPU machine the CUDA runtime
    // the library links maps a few hundred MiB at start).
    const long base = baselineRssKb();
    EXPECT_LT(m.maxRssKb - base, kMaxRssKb) << what;
    EXPECT_LT(m.seconds, 10.0) << what;
    std::cout << "[          ] " << what << ": " << m.maxRssKb / 1024 << " MiB peak RSS (" << base / 1024
              << " MiB for a missing file), " << m.seconds << " s\n";
  }

  // A small valid input: raw BF16 elements near 1.0.
  std::string rawInput() const {
    std::vector<uint8_t> v(8192);
    for (size_t i = 0; i < v.size(); i += 2) {
      v[i] = uint8_t(i * 7);
      v[i + 1] = uint8_t(0x3F + (i % 3 == 0));
    }
    writeBytes(path("in.raw"), v);
    return path("in.raw");
  }

  // A file of `size` bytes that holds only `head` (the rest is a hole: no disk, no memory).
  std::string sparse(const std::string& name, const std::string& head, off_t size) const {
    std::string p = path(name);
    int fd = open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(write(fd, head.data(), head.size()), ssize_t(head.size()));
    EXPECT_EQ(ftruncate(fd, size), 0);
    close(fd);
    return p;
  }

  // A safetensors file: the 8-byte length `len`, then `header`.
  std::string safetensors(const std::string& name, uint64_t len, const std::string& header) const {
    std::string f(8, '\0');
    for (int i = 0; i < 8; ++i) f[i] = char(len >> (8 * i));
    f += header;
    writeBytes(path(name), f.data(), f.size());
    return path(name);
  }
};

TEST_F(CliHostile, FifosDevicesAndDirectoriesFailAtOnce) {
  const std::string fifo = path("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string kv = rawInput();
  Measured ok = measure({"compress", "--dtype", "bf16", kv, path("good.sz")});
  ASSERT_EQ(ok.status, 0) << ok.err;
  const std::string frame = path("good.sz");
  const std::vector<std::vector<std::string>> inputs = {
      {"compress", "--dtype", "bf16"}, {"decompress"}, {"stats", "--dtype", "bf16"},
      {"calibrate", "--dtype", "bf16", "-o", path("x.codebook")}};
  for (const std::string& bad : {fifo, std::string("/dev/zero"), dir_}) {
    const std::string kind = bad == fifo ? "FIFO" : bad == dir_ ? "directory" : "device";
    for (std::vector<std::string> args : inputs) {
      args.push_back(bad);
      if (args[0] == "compress" || args[0] == "decompress") args.push_back(path("out"));
      SCOPED_TRACE(args[0] + " from a " + kind);
      expectQuickError(args, kind);
    }
    SCOPED_TRACE("codebook " + kind);
    expectQuickError({"compress", "--dtype", "bf16", "--codebook", bad, kv, path("out")}, "not a regular file");
  }
  // Outputs: a FIFO nobody reads, one that a reader holds open, a device, a directory.
  int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  for (bool withReader : {false, true}) {
    if (!withReader) close(reader);
    if (withReader) reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    ASSERT_TRUE(!withReader || reader >= 0);
    SCOPED_TRACE(withReader ? "FIFO with a reader" : "FIFO without a reader");
    expectQuickError({"compress", "--dtype", "bf16", kv, fifo}, "FIFO");
    expectQuickError({"decompress", frame, fifo}, "FIFO");
    expectQuickError({"calibrate", "--dtype", "bf16", "-o", fifo, kv}, "FIFO");
  }
  close(reader);
  expectQuickError({"compress", "--dtype", "bf16", kv, "/dev/null"}, "device");
  expectQuickError({"decompress", frame, dir_}, "irectory");
}

// An output that is an input (its own path, a hard link, a symbolic link) is refused before
// anything is written: the input keeps every byte.
TEST_F(CliHostile, OutputThatIsAnInputIsRefusedAndTheInputKept) {
  const std::string kv = rawInput();
  const std::vector<uint8_t> kvBytes = readBytes(kv);
  ASSERT_EQ(measure({"compress", "--dtype", "bf16", kv, path("good.sz")}).status, 0);
  const std::string frame = path("good.sz");
  const std::vector<uint8_t> frameBytes = readBytes(frame);
  ASSERT_EQ(measure({"calibrate", "--dtype", "bf16", "-o", path("kv.codebook"), kv}).status, 0);
  const std::string book = path("kv.codebook");
  const std::vector<uint8_t> bookBytes = readBytes(book);
  ASSERT_EQ(link(kv.c_str(), path("hard.raw").c_str()), 0);
  ASSERT_EQ(symlink(frame.c_str(), path("soft.sz").c_str()), 0);
  expectQuickError({"compress", "--dtype", "bf16", kv, kv}, "is the input");
  expectQuickError({"compress", "--dtype", "bf16", kv, path("hard.raw")}, "overwrite the input");
  expectQuickError({"compress", "--dtype", "bf16", "--codebook", book, kv, book}, "is the input");
  expectQuickError({"decompress", frame, frame}, "is the input");
  expectQuickError({"decompress", frame, path("soft.sz")}, "is the input");
  expectQuickError({"calibrate", "--dtype", "bf16", "-o", kv, frame, kv}, "is the input");
  EXPECT_EQ(readBytes(kv), kvBytes);
  EXPECT_EQ(readBytes(frame), frameBytes);
  EXPECT_EQ(readBytes(book), bookBytes);
  // Another output beside them still works, and so does the round trip.
  Measured m = measure({"decompress", path("soft.sz"), path("back.raw")});
  EXPECT_EQ(m.status, 0) << m.err;
  EXPECT_EQ(readBytes(path("back.raw")), kvBytes);
}

TEST_F(CliHostile, HugeHeadersAndSparseFilesStayUnder256MiB) {
  const uint64_t header = uint64_t(100) << 20;  // the safetensors limit itself
  const std::string kv = rawInput();
  std::string nested = safetensors("nested.safetensors", header, "{\"t\":" + std::string(header - 5, '['));
  std::string arrays = safetensors("arrays.safetensors", header, std::string(header, '['));
  std::string unclosed = safetensors("unclosed.safetensors", 50000000, std::string(50000000, '['));
  std::string deepMeta = safetensors("meta.safetensors", 1 << 20,
                                     "{\"__metadata__\":" + std::string((1 << 20) - 16, '{'));
  for (const std::string& f : {nested, arrays, unclosed, deepMeta}) {
    SCOPED_TRACE(f);
    expectBoundedError({"stats", "--dtype", "bf16", f}, "safetensors");
    expectBoundedError({"compress", "--dtype", "bf16", f, path("x.sz")}, "safetensors");
  }
  // A long shape array: refused at its 65th entry.
  std::string dims;
  for (int i = 0; i < 100000; ++i) dims += "1,";
  std::string longShape = safetensors("shape.safetensors", dims.size() + 60,
                                      "{\"t\":{\"dtype\":\"BF16\",\"shape\":[" + dims + "1],\"data_offsets\":[0,2]}}" +
                                          std::string(60 - 45, ' '));
  expectBoundedError({"stats", "--dtype", "bf16", longShape}, "more than 64 entries");
  // A .npy header length above NumPy's own ceiling.
  std::string npy = sparse("big.npy", std::string("\x93NUMPY\x02\x00\x00\x00\x10\x00", 12), off_t(1) << 30);
  expectBoundedError({"compress", "--dtype", "bf16", npy, path("x.sz")}, "implausible");
  // A codebook of 2 GiB (one endless line) and one of 4 KiB on one line.
  std::string bigBook = sparse("big.codebook", "splitzip-codebook 1\n", off_t(2) << 30);
  expectBoundedError({"compress", "--dtype", "bf16", "--codebook", bigBook, kv, path("x.sz")}, "codebook");
  std::string longLine = sparse("long.codebook", "splitzip-codebook 1\n#", 4096);
  expectBoundedError({"stats", "--dtype", "bf16", "--codebook", longLine, kv}, "limit is 1024");
  // 3 GiB that are not a frame, and 3 GiB after a valid frame: refused from the header.
  std::string notFrame = sparse("zeros.sz", "", off_t(3) << 30);
  expectBoundedError({"decompress", notFrame, path("x.raw")}, "magic");
  Measured ok = measure({"compress", "--dtype", "bf16", kv, path("good.sz")});
  ASSERT_EQ(ok.status, 0) << ok.err;
  std::vector<uint8_t> good = readBytes(path("good.sz"));
  std::string trailing = sparse("trailing.sz", std::string(good.begin(), good.end()), off_t(3) << 30);
  expectBoundedError({"decompress", trailing, path("x.raw")}, "after the end of the frame");
}

}  // namespace
