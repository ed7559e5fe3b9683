// The `splitzip` tool run as a program on temporary files, shared by the CLI test files: the
// binary is $SPLITZIP_CLI, or ../bin/splitzip next to this test binary's folder
// (build/tests -> build/bin).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace clitest {

namespace fs = std::filesystem;

inline std::string cliPath() {
  if (const char* env = getenv("SPLITZIP_CLI")) return env;
  return (fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "bin" / "splitzip").string();
}

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::vector<uint8_t> readBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

inline void writeBytes(const std::string& path, const void* data, size_t n) {
  std::ofstream(path, std::ios::binary).write(static_cast<const char*>(data), std::streamsize(n));
}
inline void writeBytes(const std::string& path, const std::vector<uint8_t>& v) { writeBytes(path, v.data(), v.size()); }

// A .npy file (format `major`.0) of `data` with the given descr, shape and order.
inline std::vector<uint8_t> npyFile(const std::string& descr, const std::string& shape,
                             const std::vector<uint8_t>& data, int major = 1,
                             const std::string& order = "False") {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }";
  const size_t pre = major == 1 ? 10 : 12;
  dict.append(63 - (pre + dict.size()) % 64, ' ');
  dict += '\n';
  std::vector<uint8_t> f = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  for (size_t i = 0; i < pre - 8; ++i) f.push_back(uint8_t(dict.size() >> (8 * i)));
  f.insert(f.end(), dict.begin(), dict.end());
  f.insert(f.end(), data.begin(), data.end());
  return f;
}

struct CliRun {
  int status;  // exit status, or 128 + signal
  std::string out, err;
};

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    cli_ = cliPath();
    ASSERT_EQ(access(cli_.c_str(), X_OK), 0) << cli_ << " not built (make builds it; or set SPLITZIP_CLI)";
    char tmpl[] = "/tmp/sz_cli_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  CliRun run(const std::string& args) const {
    const std::string out = path("stdout"), err = path("stderr");
    int rc = std::system((quote(cli_) + " " + args + " >" + quote(out) + " 2>" + quote(err)).c_str());
    CliRun r;
    r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + (WIFSIGNALED(rc) ? WTERMSIG(rc) : 0);
    std::vector<uint8_t> o = readBytes(out), e = readBytes(err);
    r.out.assign(o.begin(), o.end());
    r.err.assign(e.begin(), e.end());
    return r;
  }

  // A failure: exit status 1 (not a crash) and exactly one "splitzip: error: ..." line.
  void expectError(const std::string& args, const std::string& mention = "") const {
    CliRun r = run(args);
    EXPECT_EQ(r.status, 1) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("splitzip: error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(mention), std::string::npos) << args << ": " << r.err;
  }

  void expectOk(const CliRun& r, const std::string& what) const {
    EXPECT_EQ(r.status, 0) << what << ": " << r.err;
    EXPECT_EQ(r.err, "") << what;
  }

  // compress IN, decompress, and compare with `expected` (the raw elements IN holds).
  void expectRoundTrip(const std::string& in, const std::string& dtype,
                       const std::vector<uint8_t>& expected, const std::string& extra = "") const {
    expectOk(run("compress --dtype " + dtype + " " + extra + " " + quote(in) + " " + quote(path("f.sz"))), in);
    expectOk(run("decompress " + quote(path("f.sz")) + " " + quote(path("f.raw"))), in);
    EXPECT_EQ(readBytes(path("f.raw")), expected) << in << " " << dtype << " " << extra;
  }

  std::string cli_, dir_;
};

}  // namespace clitest
