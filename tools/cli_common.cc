// Shared helpers of the `splitzip` subcommands (see cli_common.h).
#include "cli_common.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sztool {

void check(szResult_t res, const std::string& context) {
  if (res == szSuccess) return;
  const char* detail = szGetLastError(nullptr);
  throw CliError(fmt::format("{}: {}", context, *detail ? detail : szGetErrorString(res)));
}

const std::map<std::string, szDataType_t>& dtypeNames() {  // lower case; --dtype takes any case
  static const std::map<std::string, szDataType_t> names = {
      {"bf16", szBfloat16}, {"fp32", szFloat32}, {"fp8e5m2", szFloat8e5m2}, {"fp16", szFloat16},
      {"fp8e4m3", szFloat8e4m3}};
  return names;
}

std::string dtypeName(szDataType_t type) {
  for (const auto& [name, t] : dtypeNames())
    if (t == type) return name;
  return fmt::format("type {}", int(type));
}

std::string ratioText(uint64_t raw, uint64_t frame) {
  return raw ? fmt::format("{:.4f}", compressionRatio(raw, frame)) : "n/a (no elements)";
}

uint32_t exponentBits(szDataType_t type) {
  return type == szFloat8e5m2 || type == szFloat16 ? 5 : type == szFloat8e4m3 ? 4 : 8;
}

int codeBitsOf(const szCodebook_t& cb) {
  int bits = 4;
  check(szCodebookCodeBits(&cb, &bits), "codebook");
  return bits;
}

std::vector<int> codebookExponents(const szCodebook_t& cb) {  // 16 entries, or 8 for 3-bit codes
  return std::vector<int>(cb.exponents, cb.exponents + (1 << codeBitsOf(cb)));
}

std::string joinInts(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : " ") + std::to_string(x);
  return s;
}

namespace {

// Reads and writes go in pieces of at most this much: one system call never asks for more.
constexpr uint64_t kIoPieceBytes = uint64_t(64) << 20;

// What a non-regular file is, for the error line.
std::string notRegular(const struct stat& st) {
  if (S_ISFIFO(st.st_mode)) return "is a FIFO, not a regular file";
  if (S_ISDIR(st.st_mode)) return "is a directory, not a regular file";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "is a device, not a regular file";
  if (S_ISSOCK(st.st_mode)) return "is a socket, not a regular file";
  return "is not a regular file";
}

// Opens `path` for writing without blocking or truncating, and checks it is a regular file;
// the caller truncates. O_NONBLOCK makes a FIFO without a reader fail (ENXIO) instead of
// waiting for one, and one with a reader is refused by the check.
int openOutput(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0666);
  if (fd < 0) {
    struct stat st;
    if (errno == ENXIO && stat(path.c_str(), &st) == 0)
      throw CliError(fmt::format("{} {}", path, notRegular(st)));
    throw CliError(fmt::format("cannot create {}: {}", path, strerror(errno)));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    std::string why = fmt::format("{} {}", path, notRegular(st));
    close(fd);
    throw CliError(why);
  }
  return fd;
}

}  // namespace

InputFile::InputFile(const std::string& path) : path_(path) {
  fd_ = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd_ < 0) throw CliError(fmt::format("cannot open {}: {}", path, strerror(errno)));
  struct stat st;
  if (fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    std::string why = fmt::format("{} {}", path, notRegular(st));
    close(fd_);
    throw CliError(why);
  }
  size_ = uint64_t(st.st_size);
}

InputFile::~InputFile() { close(fd_); }

void InputFile::fail(const std::string& what) const { throw CliError(fmt::format("{}: {}", path_, what)); }

void InputFile::read(uint64_t offset, void* dst, uint64_t bytes) const {
  if (offset > size_ || bytes > size_ - offset)
    fail(fmt::format("truncated: needs bytes [{}, {}), file has {}", offset, offset + bytes, size_));
  auto* p = static_cast<uint8_t*>(dst);
  for (uint64_t done = 0; done < bytes;) {
    ssize_t n = pread(fd_, p + done, size_t(std::min(bytes - done, kIoPieceBytes)), off_t(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(fmt::format("read error: {}", strerror(errno)));
    if (n == 0) fail("file shrank while it was read");
    done += uint64_t(n);
  }
}

void writeFileBytes(const std::string& path, const void* data, size_t bytes) {
  int fd = openOutput(path);
  bool ok = ftruncate(fd, 0) == 0;
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t done = 0; ok && done < bytes;) {
    ssize_t n = write(fd, p + done, size_t(std::min<uint64_t>(bytes - done, kIoPieceBytes)));
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += size_t(n);
  }
  int err = errno;
  ok = close(fd) == 0 && ok;  // a full disk may only show at close
  if (!ok) throw CliError(fmt::format("cannot write {}: {}", path, strerror(err != 0 ? err : errno)));
}

void checkOutputPath(const std::string& path) { close(openOutput(path)); }

void checkOutputIsNoInput(const std::string& output, const std::vector<std::string>& inputs) {
  struct stat out;
  if (stat(output.c_str(), &out) != 0) return;  // no such file yet: it is no input
  for (const std::string& in : inputs) {
    struct stat st;
    if (stat(in.c_str(), &st) == 0 && st.st_dev == out.st_dev && st.st_ino == out.st_ino)
      throw CliError(fmt::format("{} is the input {}: writing it would overwrite the input; name another output",
                                 output, in));
  }
}

std::string CodebookChoice::describe() const {
  if (calibrates()) return "calibrated on the input";
  return value == "default" ? "built-in default" : "file " + value;
}

szCodebook_t CodebookChoice::resolve(const szHistogram_t& hist) const {
  const szDataType_t type = hist.type;
  szCodebook_t cb;
  if (calibrates()) {
    check(szCodebookFromHistogram(&hist, &cb), "calibration");
    return cb;
  }
  if (value == "default") {
    check(szCodebookDefault(type, &cb), "default codebook");
    return cb;
  }
  check(szCodebookLoad(value.c_str(), &cb), "codebook");
  if (cb.type != type)
    throw CliError(fmt::format("codebook {} is for {}, the data is {}", value, dtypeName(cb.type),
                               dtypeName(type)));
  return cb;
}

}  // namespace sztool
