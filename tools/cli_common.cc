// Shared helpers of the `splitzip` subcommands (see cli_common.h).
#include "cli_common.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace sztool {

void check(szResult_t res, const std::string& context) {
  if (res == szSuccess) return;
  const char* detail = szGetLastError(nullptr);
  throw CliError(fmt::format("{}: {}", context, *detail ? detail : szGetErrorString(res)));
}

const std::map<std::string, szDataType_t>& dtypeNames() {
  static const std::map<std::string, szDataType_t> names = {
      {"bf16", szBfloat16}, {"fp32", szFloat32}, {"fp8e5m2", szFloat8e5m2}};
  return names;
}

std::string dtypeName(szDataType_t type) {
  for (const auto& [name, t] : dtypeNames())
    if (t == type) return name;
  return fmt::format("type {}", int(type));
}

uint32_t exponentBits(szDataType_t type) { return type == szFloat8e5m2 ? 5 : 8; }

std::vector<int> codebookExponents(const szCodebook_t& cb) {
  return std::vector<int>(cb.exponents, cb.exponents + SZ_CODEBOOK_SIZE);
}

std::string joinInts(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : " ") + std::to_string(x);
  return s;
}

namespace {
struct FileCloser {
  void operator()(FILE* f) const { fclose(f); }
};
}  // namespace

std::vector<uint8_t> readFileBytes(const std::string& path) {
  std::unique_ptr<FILE, FileCloser> f(fopen(path.c_str(), "rb"));
  if (!f) throw CliError(fmt::format("cannot open {}: {}", path, strerror(errno)));
  struct stat st;  // a directory, a pipe or a device has no size to read up to (/dev/zero)
  if (fstat(fileno(f.get()), &st) != 0 || !S_ISREG(st.st_mode))
    throw CliError(fmt::format("{}: not a regular file", path));
  if (st.st_size == 0) throw CliError(fmt::format("{}: empty file", path));
  std::vector<uint8_t> data(size_t(st.st_size));
  if (fread(data.data(), 1, data.size(), f.get()) != data.size())
    throw CliError(fmt::format("cannot read {}: {}", path, ferror(f.get()) ? strerror(errno) : "file shrank"));
  return data;
}

void writeFileBytes(const std::string& path, const void* data, size_t bytes) {
  std::unique_ptr<FILE, FileCloser> f(fopen(path.c_str(), "wb"));
  if (!f) throw CliError(fmt::format("cannot create {}: {}", path, strerror(errno)));
  bool ok = bytes == 0 || fwrite(data, 1, bytes, f.get()) == bytes;  // data may be NULL when empty
  ok = fclose(f.release()) == 0 && ok;  // a full disk may only show at close
  if (!ok) throw CliError(fmt::format("cannot write {}: {}", path, strerror(errno)));
}

szCodebook_t codebookFor(szDataType_t type, const std::string& path) {
  szCodebook_t cb;
  if (path.empty()) {
    check(szCodebookDefault(type, &cb), "default codebook");
    return cb;
  }
  check(szCodebookLoad(path.c_str(), &cb), "codebook");
  if (cb.type != type)
    throw CliError(fmt::format("codebook {} is for {}, the data is {}", path, dtypeName(cb.type),
                               dtypeName(type)));
  return cb;
}

}  // namespace sztool
