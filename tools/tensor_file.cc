// Raw, .npy and .safetensors readers (see tensor_file.h). Sizes read from a file are checked
// against the file size, with overflow checks, before they are used to allocate or read.
#include "tensor_file.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_common.h"

namespace sztool {
namespace {

// A safetensors header is a few KB per thousand tensors; this bounds what a hostile length
// field can make us allocate.
constexpr uint64_t kMaxSafetensorsHeader = uint64_t(100) << 20;
constexpr uint64_t kMaxNpyHeader = uint64_t(1) << 20;

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

uint64_t loadLe(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Product of `dims` times `elemBytes`; false on overflow.
bool shapeBytes(const std::vector<uint64_t>& dims, uint64_t elemBytes, uint64_t* count,
                uint64_t* bytes) {
  uint64_t n = 1;
  for (uint64_t d : dims)
    if (__builtin_mul_overflow(n, d, &n)) return false;
  *count = n;
  return !__builtin_mul_overflow(n, elemBytes, bytes);
}

// A regular file read at offsets; every read must lie inside the file.
class InputFile {
 public:
  explicit InputFile(const std::string& path) : path_(path), f_(fopen(path.c_str(), "rb")) {
    if (f_ == nullptr) throw CliError(fmt::format("cannot open {}: {}", path, strerror(errno)));
    struct stat st;
    if (fstat(fileno(f_), &st) != 0 || !S_ISREG(st.st_mode)) {
      fclose(f_);
      throw CliError(fmt::format("{}: not a regular file", path));
    }
    size_ = uint64_t(st.st_size);
  }
  ~InputFile() { fclose(f_); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  uint64_t size() const { return size_; }

  [[noreturn]] void fail(const std::string& what) const {
    throw CliError(fmt::format("{}: {}", path_, what));
  }

  void read(uint64_t offset, void* dst, uint64_t bytes) const {
    if (offset > size_ || bytes > size_ - offset)
      fail(fmt::format("truncated: needs bytes [{}, {}), file has {}", offset, offset + bytes, size_));
    if (bytes == 0) return;
    if (fseeko(f_, off_t(offset), SEEK_SET) != 0 || fread(dst, 1, bytes, f_) != bytes)
      fail(fmt::format("read error: {}", strerror(errno)));
  }

 private:
  std::string path_;
  FILE* f_;
  uint64_t size_ = 0;
};

TensorData readRaw(const InputFile& f, szDataType_t type) {
  uint64_t elem = szTypeSize(type);
  if (f.size() % elem != 0)
    f.fail(fmt::format("{} bytes is not a whole number of {}-byte {} elements", f.size(), elem,
                       dtypeName(type)));
  TensorData t;
  t.count = f.size() / elem;
  t.bytes.resize(f.size());
  f.read(0, t.bytes.data(), f.size());
  return t;
}

// ---- .npy: magic, version, header length, then a Python dict literal such as
// {'descr': '<u2', 'fortran_order': False, 'shape': (3, 4), }
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<uint64_t> shape;
};

class NpyDictParser {
 public:
  NpyDictParser(const InputFile& f, const std::string& text) : f_(f), s_(text) {}

  NpyHeader parse() {
    NpyHeader h;
    bool haveDescr = false, haveOrder = false, haveShape = false;
    expect('{');
    while (!peek('}')) {
      std::string key = quoted();
      expect(':');
      if (key == "descr") {
        if (peek('[')) f_.fail("structured .npy dtypes are not supported");
        h.descr = quoted();
        haveDescr = true;
      } else if (key == "fortran_order") {
        h.fortranOrder = word() == "True";
        haveOrder = true;
      } else if (key == "shape") {
        h.shape = tuple();
        haveShape = true;
      } else {
        bad(fmt::format("unknown key '{}'", key));
      }
      if (!peek('}')) expect(',');
    }
    if (!haveDescr || !haveOrder || !haveShape)
      bad("needs 'descr', 'fortran_order' and 'shape'");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& why) const {
    f_.fail(fmt::format("malformed .npy header ({})", why));
  }
  void skipSpace() {
    while (pos_ < s_.size() && isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool peek(char c) {
    skipSpace();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) bad(fmt::format("expected '{}' at offset {}", c, pos_));
    ++pos_;
  }
  std::string quoted() {
    skipSpace();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) bad("expected a string");
    char q = s_[pos_++];
    size_t end = s_.find(q, pos_);
    if (end == std::string::npos) bad("unterminated string");
    std::string v = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return v;
  }
  std::string word() {
    skipSpace();
    size_t start = pos_;
    while (pos_ < s_.size() && isalpha(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    std::string w = s_.substr(start, pos_ - start);
    if (w != "True" && w != "False") bad("fortran_order is not True or False");
    return w;
  }
  std::vector<uint64_t> tuple() {
    std::vector<uint64_t> dims;
    expect('(');
    while (!peek(')')) {
      size_t start = pos_;
      uint64_t d = 0;
      while (pos_ < s_.size() && isdigit(static_cast<unsigned char>(s_[pos_]))) {
        if (__builtin_mul_overflow(d, 10, &d) || __builtin_add_overflow(d, uint64_t(s_[pos_] - '0'), &d))
          bad("shape dimension overflows");
        ++pos_;
      }
      if (pos_ == start) bad("shape is not a tuple of non-negative integers");
      dims.push_back(d);
      if (!peek(')')) expect(',');
    }
    ++pos_;
    return dims;
  }

  const InputFile& f_;
  const std::string& s_;
  size_t pos_ = 0;
};

bool npyDescrMatches(const std::string& descr, szDataType_t type) {
  static const std::map<szDataType_t, std::vector<std::string>> accepted = {
      {szBfloat16, {"<u2", "<i2", "<V2", "|V2", "bfloat16"}},
      {szFloat32, {"<f4", "<u4", "<i4", "<V4", "|V4"}},
      {szFloat8e5m2, {"|u1", "|i1", "<u1", "<i1", "|V1", "<V1", "float8_e5m2"}}};
  auto it = accepted.find(type);
  return it != accepted.end() &&
         std::find(it->second.begin(), it->second.end(), descr) != it->second.end();
}

TensorData readNpy(const InputFile& f, szDataType_t type) {
  uint8_t pre[12] = {};
  f.read(0, pre, std::min<uint64_t>(f.size(), sizeof(pre)));
  if (f.size() < 10 || memcmp(pre, "\x93NUMPY", 6) != 0) f.fail("not a .npy file (bad magic)");
  uint64_t lenBytes = pre[6] == 1 ? 2 : (pre[6] == 2 || pre[6] == 3) ? 4 : 0;
  if (lenBytes == 0) f.fail(fmt::format(".npy format version {} is not supported", pre[6]));
  if (f.size() < 8 + lenBytes) f.fail("truncated .npy header");
  uint64_t headerLen = loadLe(pre + 8, int(lenBytes));
  uint64_t headerOff = 8 + lenBytes;
  if (headerLen > kMaxNpyHeader) f.fail(fmt::format(".npy header length {} is implausible", headerLen));
  std::string text(headerLen, '\0');
  f.read(headerOff, text.data(), headerLen);
  NpyHeader h = NpyDictParser(f, text).parse();
  if (!npyDescrMatches(h.descr, type))
    f.fail(fmt::format(".npy dtype '{}' does not hold {} elements", h.descr, dtypeName(type)));
  if (h.fortranOrder) f.fail("Fortran-order .npy arrays are not supported (save in C order)");
  TensorData t;
  uint64_t bytes;
  if (!shapeBytes(h.shape, szTypeSize(type), &t.count, &bytes))
    f.fail(".npy shape overflows 64 bits");
  uint64_t dataOff = headerOff + headerLen;
  if (bytes != f.size() - dataOff)
    f.fail(fmt::format(".npy shape needs {} data bytes, the file has {}", bytes, f.size() - dataOff));
  t.bytes.resize(bytes);
  f.read(dataOff, t.bytes.data(), bytes);
  return t;
}

// ---- .safetensors: u64 LE header length N, N bytes of JSON, then the data section;
// tensor `data_offsets` [begin, end) are relative to the data section.
const char* safetensorsDtype(szDataType_t type) {
  switch (type) {
    case szBfloat16: return "BF16";
    case szFloat32: return "F32";
    case szFloat8e5m2: return "F8_E5M2";
    default: return "";
  }
}

std::vector<uint64_t> unsignedArray(const InputFile& f, const std::string& tensor,
                                    const nlohmann::json& t, const char* field) {
  auto it = t.find(field);
  if (it == t.end() || !it->is_array())
    f.fail(fmt::format("tensor '{}': '{}' is missing or not an array", tensor, field));
  std::vector<uint64_t> v;
  for (const auto& x : *it) {
    if (!x.is_number_unsigned())
      f.fail(fmt::format("tensor '{}': '{}' holds a non-integer or negative value", tensor, field));
    v.push_back(x.get<uint64_t>());
  }
  return v;
}

TensorData readSafetensors(const InputFile& f, szDataType_t type) {
  uint8_t lenField[8];
  if (f.size() < sizeof(lenField)) f.fail("truncated: no safetensors header length");
  f.read(0, lenField, sizeof(lenField));
  uint64_t headerLen = loadLe(lenField, 8);
  if (headerLen > kMaxSafetensorsHeader)
    f.fail(fmt::format("safetensors header length {} exceeds the {} byte limit", headerLen,
                       kMaxSafetensorsHeader));
  if (headerLen > f.size() - 8)
    f.fail(fmt::format("safetensors header length {} exceeds the file ({} bytes)", headerLen, f.size()));
  std::string text(headerLen, '\0');
  f.read(8, text.data(), headerLen);
  nlohmann::json header = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) f.fail("safetensors header is not a JSON object");

  struct Piece {
    uint64_t begin, end;
  };
  std::vector<Piece> pieces;
  const uint64_t dataOff = 8 + headerLen, dataBytes = f.size() - dataOff;
  const std::string want = safetensorsDtype(type);
  for (const auto& [name, t] : header.items()) {
    if (name == "__metadata__") continue;
    if (!t.is_object()) f.fail(fmt::format("tensor '{}' is not a JSON object", name));
    auto dt = t.find("dtype");
    if (dt == t.end() || !dt->is_string()) f.fail(fmt::format("tensor '{}' has no dtype", name));
    std::vector<uint64_t> off = unsignedArray(f, name, t, "data_offsets");
    if (off.size() != 2 || off[0] > off[1] || off[1] > dataBytes)
      f.fail(fmt::format("tensor '{}': data_offsets outside the {} data bytes", name, dataBytes));
    if (dt->get<std::string>() != want) continue;
    uint64_t count, bytes;
    if (!shapeBytes(unsignedArray(f, name, t, "shape"), szTypeSize(type), &count, &bytes) ||
        bytes != off[1] - off[0])
      f.fail(fmt::format("tensor '{}': shape disagrees with its {} data bytes", name, off[1] - off[0]));
    pieces.push_back({off[0], off[1]});
  }
  if (pieces.empty()) f.fail(fmt::format("no {} tensors in this safetensors file", want));
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.begin < b.begin; });
  uint64_t total = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    // Non-overlapping tensors keep the total within the file, whatever the header claims.
    if (i > 0 && pieces[i].begin < pieces[i - 1].end) f.fail("safetensors tensors overlap");
    total += pieces[i].end - pieces[i].begin;
  }
  TensorData out;
  out.count = total / szTypeSize(type);
  out.bytes.resize(total);
  uint8_t* dst = out.bytes.data();
  for (const Piece& p : pieces) {
    f.read(dataOff + p.begin, dst, p.end - p.begin);
    dst += p.end - p.begin;
  }
  return out;
}

}  // namespace

TensorData readTensorFile(const std::string& path, szDataType_t type) {
  if (szTypeSize(type) == 0) throw CliError(fmt::format("invalid data type {}", int(type)));
  InputFile f(path);
  if (endsWith(path, ".npy")) return readNpy(f, type);
  if (endsWith(path, ".safetensors")) return readSafetensors(f, type);
  return readRaw(f, type);
}

}  // namespace sztool
