// Calibration (paper §3.3): exponent histograms, top-16 codebooks, the built-in default
// codebooks, and the codebook file of docs/FORMAT.md §Codebook file.
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calibrate.h"
#include "chunk_codec.h"
#include "code_bits.h"
#include "base/checks.h"

using namespace sz;

namespace {

// A codebook file is a handful of short lines and comments: these bound what a hostile file
// (a sparse file of gigabytes, one endless line) can make the loader read or allocate.
constexpr int kMaxCodebookLines = 1024;
constexpr size_t kMaxCodebookLineBytes = 1024;
constexpr off_t kMaxCodebookFileBytes = 64 << 10;

// A line of the file as an error message quotes it: printable ASCII as is, other bytes as \xNN
// (a binary file's bytes never reach the terminal raw), at most 60 bytes of it.
std::string quotedLine(const std::string& line) {
  std::string q;
  for (size_t i = 0; i < line.size() && i < 60; ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    if (c >= 0x20 && c < 0x7F) {
      q += char(c);
    } else {
      char hex[5];
      snprintf(hex, sizeof hex, "\\x%02X", c);
      q += hex;
    }
  }
  return line.size() > 60 ? q + "..." : q;
}

// Opens `path` without blocking (O_NONBLOCK: a FIFO would wait for its other end) and checks
// it is a regular file; -1 with the error recorded otherwise.
int openRegular(const char* path, int flags, szResult_t* res) {
  int fd = open(path, flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0666);
  struct stat st;
  if (fd < 0) {
    bool special = errno == ENXIO && stat(path, &st) == 0;  // a FIFO that nobody reads
    *res = special ? szSetError(szInvalidArgument, "codebook %s is not a regular file", path)
                   : szSetError(szSystemError, "cannot open codebook %s: %s", path, strerror(errno));
    return -1;
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    *res = szSetError(szInvalidArgument, "codebook %s is not a regular file", path);
    return -1;
  }
  *res = szSuccess;
  return fd;
}

// The whole file, at most kMaxCodebookFileBytes.
szResult_t readSmallFile(const char* path, std::string* text) {
  szResult_t res;
  int fd = openRegular(path, O_RDONLY, &res);
  if (fd < 0) return res;
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size > kMaxCodebookFileBytes) {
    close(fd);
    return szSetError(szInvalidArgument, "%s: %lld bytes, more than a codebook file's %lld", path,
                      (long long)st.st_size, (long long)kMaxCodebookFileBytes);
  }
  text->assign(size_t(st.st_size), '\0');
  size_t done = 0;
  while (done < text->size()) {
    ssize_t n = read(fd, &(*text)[done], text->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += size_t(n);
  }
  int err = errno;
  close(fd);
  if (done != text->size())
    return szSetError(szSystemError, "cannot read codebook %s: %s", path, done < text->size() ? strerror(err) : "");
  return szSuccess;
}

// The type field of a caller's struct, read as the integer it holds: loading an enum from
// garbage (an uninitialized struct) is undefined behaviour, so the value is checked first.
TypeTraits traitsOf(const szDataType_t& field) {
  int v;
  memcpy(&v, &field, sizeof(v));
  return v >= 0 && v < szNumTypes ? typeTraits(szDataType_t(v)) : TypeTraits{};
}

// Calibrated on the KV cache of TinyStories-656K over the calibration span of WikiText-2
// (tests/data/default_*.codebook; tests/data/README.md says how to regenerate): its 15 most
// frequent exponents, then exponent 0, so that zeros (the zero padding of a partly filled
// block or pool) cost a code like any other element instead of an escape each. FP32 shares
// the BF16 codebook: both have the same 8-bit exponent field.
const uint8_t kDefaultBf16[kCodebookSize] = {127, 126, 128, 125, 124, 123, 129, 122,
                                             121, 120, 119, 118, 117, 116, 130, 0};
const uint8_t kDefaultFp8e5m2[kCodebookSize] = {15, 14, 16, 13, 12, 17, 11, 10,
                                                9, 8, 7, 6, 5, 18, 4, 0};
// FP16: 4-bit codes with exponent 0 last, like the three above (predicted 1.066 on the span);
// 3-bit codes predict 1.105 there, but zero padding would escape, so calibration picks them
// where the data has no zeros. FP8 E4M3 (scaled per tensor, amax -> 448): its 16 exponents fit
// 4-bit codes with nothing saved, so its default is the top 8 as 3-bit codes (predicted 1.080);
// zeros escape (a mostly-zero frame goes raw).
const uint8_t kDefaultFp16[kCodebookSize] = {15, 14, 16, 13, 12, 11, 17, 10, 9, 8, 7, 6, 5, 4, 18, 0};
const uint8_t kDefaultFp8e4m3[kCodebookSize] = {13, 12, 14, 11, 10, 9, 15, 8,
                                                SZ_CODEBOOK_UNUSED, SZ_CODEBOOK_UNUSED, SZ_CODEBOOK_UNUSED,
                                                SZ_CODEBOOK_UNUSED, SZ_CODEBOOK_UNUSED, SZ_CODEBOOK_UNUSED,
                                                SZ_CODEBOOK_UNUSED, SZ_CODEBOOK_UNUSED};

const struct { szDataType_t type; const char* name; } kTypeNames[] = {
    {szBfloat16, "bf16"}, {szFloat32, "fp32"}, {szFloat8e5m2, "fp8e5m2"}, {szFloat16, "fp16"},
    {szFloat8e4m3, "fp8e4m3"}};

constexpr const char* kCompressedTypes = "bf16, fp32, fp16, fp8e5m2 and fp8e4m3";

// The codebook of `bits`-bit codes from `counts` (a 3-bit one marked as such).
void fromCounts(const unsigned long long* counts, szDataType_t type, uint32_t bits, szCodebook_t* cb) {
  cb->type = type;
  memset(cb->exponents, SZ_CODEBOOK_UNUSED, kCodebookSize);
  cb->used = selectCodebook(counts, typeTraits(type).expBits, cb->exponents, 1 << bits);
}

// Uncompressed over compressed bits of the histogram's elements under `cb`, 1 when the frame
// would go raw (escapes at 3 bytes, headers and padding left out).
double predictRatio(const szHistogram_t& hist, const szCodebook_t& cb) {
  const TypeTraits t = typeTraits(hist.type);
  const uint32_t range = 1u << t.expBits;
  double n = 0;
  for (uint32_t e = 0; e < range; ++e) n += double(hist.counts[e]);
  if (n == 0) return 1.0;
  const double coded = double(codedBy(hist.counts, range, cb)), bits = codebookBits(cb);
  const double compressed = n * (t.smBits + bits) + (n - coded) * 8.0 * kEscapeBytes;
  const double raw = n * t.elemBits();
  return compressed < raw ? raw / compressed : 1.0;
}

}  // namespace

extern "C" size_t szTypeSize(szDataType_t type) { return typeTraits(type).elemBytes; }

extern "C" int szTypeIsCompressible(szDataType_t type) { return typeTraits(type).expBits != 0; }

extern "C" szResult_t szHistogramInit(szHistogram_t* hist, szDataType_t type) {
  if (hist == nullptr) return szSetError(szInvalidArgument, "szHistogramInit: hist is NULL");
  if (!szTypeIsCompressible(type))
    return szSetError(szInvalidArgument, "%s has no exponent to calibrate (only %s are compressed)", szTypeName(type),
                      kCompressedTypes);
  memset(hist, 0, sizeof(*hist));
  hist->type = type;
  return szSuccess;
}

extern "C" szResult_t szHistogramAccumulate(szHistogram_t* hist, const void* data, size_t count) {
  if (hist == nullptr || (data == nullptr && count > 0))
    return szSetError(szInvalidArgument, "szHistogramAccumulate: NULL argument");
  TypeTraits t = traitsOf(hist->type);
  if (t.expBits == 0) return szSetError(szInvalidArgument, "histogram has invalid type");
  const uint8_t* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < count; ++i) {
    uint32_t w = 0;
    memcpy(&w, p + i * t.elemBytes, t.elemBytes);
    hist->counts[t.exponent(w)]++;
  }
  return szSuccess;
}

extern "C" szResult_t szCodebookFromHistogramBits(const szHistogram_t* hist, int codeBits, szCodebook_t* cb) {
  if (hist == nullptr || cb == nullptr)
    return szSetError(szInvalidArgument, "szCodebookFromHistogram: NULL argument");
  if (traitsOf(hist->type).expBits == 0) return szSetError(szInvalidArgument, "histogram has invalid type");
  if (codeBits != 3 && codeBits != 4)
    return szSetError(szInvalidArgument, "szCodebookFromHistogramBits: codeBits %d (3 or 4)", codeBits);
  fromCounts(hist->counts, hist->type, uint32_t(codeBits), cb);
  return szSuccess;
}

extern "C" szResult_t szCodebookFromHistogram(const szHistogram_t* hist, szCodebook_t* cb) {
  SZCHECK(szCodebookFromHistogramBits(hist, 4, cb));
  if (deviceCodecType(hist->type)) return szSuccess;  // the GPU codec's and the wire's width
  szCodebook_t narrow;
  fromCounts(hist->counts, hist->type, 3, &narrow);
  if (predictRatio(*hist, narrow) > predictRatio(*hist, *cb)) *cb = narrow;
  return szSuccess;
}

extern "C" szResult_t szCodebookPredictRatio(const szHistogram_t* hist, int codeBits, double* ratio) {
  if (ratio == nullptr) return szSetError(szInvalidArgument, "szCodebookPredictRatio: ratio is NULL");
  szCodebook_t cb;
  SZCHECK(szCodebookFromHistogramBits(hist, codeBits, &cb));
  *ratio = predictRatio(*hist, cb);
  return szSuccess;
}

extern "C" szResult_t szCodebookValidate(const szCodebook_t* cb) {
  if (cb == nullptr) return szSetError(szInvalidArgument, "codebook is NULL");
  TypeTraits t = traitsOf(cb->type);
  if (t.expBits == 0) return szSetError(szInvalidArgument, "codebook type is not a compressible type");
  const uint32_t bits = codebookBits(*cb), entries = 1u << bits;
  if (cb->used < 1 || cb->used > int(entries))
    return szSetError(szInvalidArgument, "codebook 'used' is %d, must be 1..%u for %u-bit codes", cb->used, entries,
                      bits);
  for (uint32_t i = 0; i < entries; ++i) {
    if (cb->exponents[i] >= (1u << t.expBits))
      return szSetError(szInvalidArgument, "codebook exponent %u out of range for the type", cb->exponents[i]);
    for (uint32_t j = 0; j < i; ++j)
      if (cb->exponents[i] == cb->exponents[j])
        return szSetError(szInvalidArgument, "codebook exponent %u appears twice", cb->exponents[i]);
  }
  return szSuccess;
}

extern "C" szResult_t szCodebookCodeBits(const szCodebook_t* cb, int* codeBits) {
  if (codeBits == nullptr) return szSetError(szInvalidArgument, "szCodebookCodeBits: codeBits is NULL");
  SZCHECK(szCodebookValidate(cb));
  *codeBits = int(codebookBits(*cb));
  return szSuccess;
}

extern "C" szResult_t szCodebookDefault(szDataType_t type, szCodebook_t* cb) {
  if (cb == nullptr) return szSetError(szInvalidArgument, "szCodebookDefault: codebook is NULL");
  if (type == szBfloat16 || type == szFloat32) {
    memcpy(cb->exponents, kDefaultBf16, kCodebookSize);  // FP32 and BF16 share the exponent
  } else if (type == szFloat8e5m2) {
    memcpy(cb->exponents, kDefaultFp8e5m2, kCodebookSize);
  } else if (type == szFloat16) {
    memcpy(cb->exponents, kDefaultFp16, kCodebookSize);
  } else if (type == szFloat8e4m3) {
    memcpy(cb->exponents, kDefaultFp8e4m3, kCodebookSize);
  } else {
    return szSetError(szInvalidArgument, "%s has no codebook (only %s are compressed)", szTypeName(type),
                      kCompressedTypes);
  }
  cb->type = type;
  cb->used = int(1u << codebookBits(*cb));
  return szSuccess;
}

extern "C" szResult_t szCodebookSave(const szCodebook_t* cb, const char* path) {
  SZCHECK(szCodebookValidate(cb));
  if (path == nullptr) return szSetError(szInvalidArgument, "szCodebookSave: path is NULL");
  const char* name = nullptr;
  for (const auto& tn : kTypeNames)
    if (tn.type == cb->type) name = tn.name;
  std::ostringstream s;
  const uint32_t bits = codebookBits(*cb);
  s << "splitzip-codebook 1\ntype " << name << "\nused " << cb->used;
  if (bits == 3) s << "\ncode_bits 3";  // a 4-bit file reads as 0.1.0 wrote it
  s << "\nexponents";
  for (uint32_t i = 0; i < (1u << bits); ++i) s << ' ' << int(cb->exponents[i]);
  s << '\n';
  szResult_t res;
  int fd = openRegular(path, O_WRONLY | O_CREAT, &res);
  if (fd < 0) return res;
  std::string text = s.str();
  bool ok = ftruncate(fd, 0) == 0 && write(fd, text.data(), text.size()) == ssize_t(text.size());
  ok = close(fd) == 0 && ok;
  if (!ok) return szSetError(szSystemError, "cannot write %s: %s", path, strerror(errno));
  return szSuccess;
}

extern "C" szResult_t szCodebookLoad(const char* path, szCodebook_t* cb) {
  if (path == nullptr || cb == nullptr) return szSetError(szInvalidArgument, "szCodebookLoad: NULL argument");
  std::string text;
  SZCHECK(readSmallFile(path, &text));
  std::istringstream f(text);
  szCodebook_t r{};
  r.type = szNumTypes;
  bool magic = false, haveUsed = false, haveExp = false;
  int codeBits = 4;
  std::vector<int> exps;
  std::set<std::string> seen;
  std::string line;
  for (int lineNo = 1; std::getline(f, line); ++lineNo) {
    if (lineNo > kMaxCodebookLines)
      return szSetError(szInvalidArgument, "%s: more than %d lines: not a codebook file", path, kMaxCodebookLines);
    if (line.size() > kMaxCodebookLineBytes)
      return szSetError(szInvalidArgument, "%s:%d: a line of %zu bytes (the limit is %zu): not a codebook file",
                        path, lineNo, line.size(), kMaxCodebookLineBytes);
    line = line.substr(0, line.find('#'));
    std::istringstream ls(line);
    std::string key;
    if (!(ls >> key)) continue;
    if (!seen.insert(key).second)
      return szSetError(szInvalidArgument, "%s:%d: '%s' given twice", path, lineNo, quotedLine(key).c_str());
    std::string extra;
    bool ok = true;
    if (key == "splitzip-codebook") {
      int v = 0;
      ok = (ls >> v) && v == 1;
      magic = ok;
    } else if (key == "type") {
      std::string name;
      ok = bool(ls >> name);
      for (const auto& tn : kTypeNames)
        if (name == tn.name) r.type = tn.type;
      ok = ok && r.type != szNumTypes;
    } else if (key == "used") {
      ok = bool(ls >> r.used);
      haveUsed = ok;
    } else if (key == "code_bits") {
      ok = (ls >> codeBits) && (codeBits == 3 || codeBits == 4);
    } else if (key == "exponents") {
      for (std::string token; ls >> token;) {  // each token whole: "5x" or an int's overflow is no exponent
        int e = -1;
        const char* end = token.data() + token.size();
        auto [stop, ec] = std::from_chars(token.data(), end, e);
        if (ec != std::errc() || stop != end)
          return szSetError(szInvalidArgument, "%s:%d: exponent '%s' is not a number", path, lineNo,
                            quotedLine(token).c_str());
        if (exps.size() == kCodebookSize)
          return szSetError(szInvalidArgument, "%s:%d: more than %u exponents (16 for 4-bit codes, 8 for 3-bit)",
                            path, lineNo, unsigned(kCodebookSize));
        if (e < 0 || e > 255)
          return szSetError(szInvalidArgument, "%s:%d: exponent %d is outside 0-255", path, lineNo, e);
        exps.push_back(e);
      }
      haveExp = true;
    } else {
      ok = false;
    }
    if (!ok || (ls >> extra))
      return szSetError(szInvalidArgument, "%s:%d: malformed codebook line '%s'", path, lineNo, quotedLine(line).c_str());
  }
  if (!magic || !haveUsed || !haveExp || r.type == szNumTypes)
    return szSetError(szInvalidArgument, "%s: not a SplitZip codebook file (needs splitzip-codebook 1, type, used, exponents)", path);
  if (exps.size() != (size_t(1) << codeBits))
    return szSetError(szInvalidArgument, "%s: %zu exponents for %d-bit codes (%d needed)", path, exps.size(), codeBits,
                      1 << codeBits);
  memset(r.exponents, SZ_CODEBOOK_UNUSED, kCodebookSize);
  for (size_t i = 0; i < exps.size(); ++i) r.exponents[i] = uint8_t(exps[i]);
  SZCHECK(szCodebookValidate(&r));
  *cb = r;
  return szSuccess;
}
