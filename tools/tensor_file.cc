// Raw, .npy and .safetensors readers (see tensor_file.h). Sizes read from a file are checked
// against the file size, with overflow checks, before they are used to allocate or read.
#include "tensor_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>

#include "cli_common.h"
#include "safetensors_header.h"

namespace sztool {
namespace {

// A safetensors header is a few KB per thousand tensors; 100 MB is the format's own limit
// (the reference implementation refuses larger ones), and what a hostile length field can make
// us allocate.
constexpr uint64_t kMaxSafetensorsHeader = uint64_t(100) << 20;
// NumPy itself refuses headers over 10000 bytes unless told otherwise (np.load max_header_size).
constexpr uint64_t kMaxNpyHeader = uint64_t(64) << 10;

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

// The .npy descrs each type is read from.
const std::vector<std::string>& npyDescrs(szDataType_t type) {
  static const std::map<szDataType_t, std::vector<std::string>> accepted = {
      {szBfloat16, {"<u2", "<i2", "<V2", "|V2", "bfloat16"}},
      {szFloat32, {"<f4", "<u4", "<i4", "<V4", "|V4"}},
      // ml_dtypes writes its float8 types as '<f1' (e4m3 or e5m2 alike: --dtype says which).
      {szFloat8e5m2, {"|u1", "|i1", "<u1", "<i1", "|V1", "<V1", "<f1", "|f1", "float8_e5m2"}},
      {szFloat8e4m3, {"|u1", "|i1", "<u1", "<i1", "|V1", "<V1", "<f1", "|f1", "float8_e4m3fn"}},
      {szFloat16, {"<f2", "<u2", "<i2", "<V2", "|V2"}}};
  static const std::vector<std::string> none;
  auto it = accepted.find(type);
  return it != accepted.end() ? it->second : none;
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
  const std::vector<std::string>& ok = npyDescrs(type);
  if (std::find(ok.begin(), ok.end(), h.descr) == ok.end()) {
    std::string list;
    for (const std::string& d : ok) list += (list.empty() ? "'" : ", '") + d + "'";
    f.fail(fmt::format(".npy dtype '{}' does not hold {} elements (accepted: {})", h.descr, dtypeName(type), list));
  }
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
    case szFloat8e4m3: return "F8_E4M3";
    case szFloat16: return "F16";
    default: return "";
  }
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
  const uint64_t dataOff = 8 + headerLen, dataBytes = f.size() - dataOff;
  const std::string want = safetensorsDtype(type);
  std::vector<SafetensorsPiece> pieces = parseSafetensorsHeader(f, text, want, szTypeSize(type), dataBytes);
  text = std::string();  // the header's memory is not needed next to the data
  if (pieces.empty()) f.fail(fmt::format("no {} tensors in this safetensors file", want));
  std::sort(pieces.begin(), pieces.end(), [](const SafetensorsPiece& a, const SafetensorsPiece& b) { return a.begin < b.begin; });
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
  for (const SafetensorsPiece& p : pieces) {
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
