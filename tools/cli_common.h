// What every `splitzip` subcommand shares: the one error type that main() turns into a single
// `splitzip: error: ...` line, the element types the tool accepts on its command line, whole-file
// I/O and codebook loading.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "splitzip.h"

namespace sztool {

// Any failure a subcommand reports to the user; the message is the whole error line.
struct CliError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws CliError "<context>: <library message>" unless `res` is szSuccess.
void check(szResult_t res, const std::string& context);

// The compressible types, by their command-line (and codebook file) names.
const std::map<std::string, szDataType_t>& dtypeNames();
std::string dtypeName(szDataType_t type);  // "bf16", ..., or "type N" for the others
uint32_t exponentBits(szDataType_t type);  // 8 for BF16/FP32, 5 for FP16/E5M2, 4 for E4M3
int codeBitsOf(const szCodebook_t& cb);     // 3 or 4 (CliError for an invalid codebook)

// The codebook's 16 exponents, most frequent first, and "e0 e1 ..." for printing them.
std::vector<int> codebookExponents(const szCodebook_t& cb);
std::string joinInts(const std::vector<int>& v);

// raw / frame, 0 for an empty frame.
inline double compressionRatio(uint64_t raw, uint64_t frame) {
  return frame ? double(raw) / double(frame) : 0.0;
}
// The ratio for printing: "n/a (no elements)" for empty input, whose frame is only a header.
std::string ratioText(uint64_t raw, uint64_t frame);

// Below which wire bandwidth (bytes per second) SplitZip pays, from one transfer of `bytes` timed
// raw and with frames at `ratio` over the same wire (paper App. B with a fixed cost: raw S / B,
// frames a + S / (B * R), `a` the frames path's time beyond its wire time, stored in *extraSec).
// The raw transfer's own rate where frames pay on this wire already.
inline double paysBelowBps(double bytes, double rawSec, double framesSec, double ratio, double* extraSec) {
  *extraSec = framesSec - rawSec / ratio;
  return *extraSec > 0 ? bytes * (1 - 1 / ratio) / *extraSec : bytes / rawSec;
}

// An input file read at offsets. Only regular files: it is opened without blocking
// (O_NONBLOCK: opening a FIFO would otherwise wait for a writer) and a FIFO, device or
// directory is a CliError before anything is read. Reads go in bounded pieces and must lie
// inside the file.
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  [[noreturn]] void fail(const std::string& what) const;  // CliError "<path>: <what>"
  void read(uint64_t offset, void* dst, uint64_t bytes) const;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Creates or replaces a regular file; an existing FIFO, device or directory is a CliError
// (opened without blocking, checked before it is truncated).
void writeFileBytes(const std::string& path, const void* data, size_t bytes);
// The same checks without writing: for outputs a library call writes (szCodebookSave).
void checkOutputPath(const std::string& path);
// An output that is one of the inputs (the same file: by path, hard link or symbolic link) is a
// CliError before anything is written: the input would be overwritten by its own result.
void checkOutputIsNoInput(const std::string& output, const std::vector<std::string>& inputs);

// The --codebook choice of `compress` and `stats`: "auto" (the default) calibrates on the input
// (its exact top-16, paper §3.3), "default" takes the built-in codebook, anything else names a
// codebook file.
struct CodebookChoice {
  std::string value = "auto";
  bool calibrates() const { return value == "auto"; }
  // What the tool prints: "calibrated on the input", "built-in default" or "file PATH".
  std::string describe() const;
  // The codebook for data of hist.type whose exponent histogram is `hist` (read only when
  // calibrating). A file for another type is a CliError.
  szCodebook_t resolve(const szHistogram_t& hist) const;
};

}  // namespace sztool
