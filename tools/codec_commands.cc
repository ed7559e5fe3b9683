// `splitzip compress` / `splitzip decompress`: one tensor file to one SplitZip frame
// (docs/FORMAT.md) and back to raw little-endian elements.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "codec/frame.h"
#include "cli_common.h"
#include "commands.h"
#include "tensor_file.h"

namespace sztool {
namespace {

struct CompressOptions {
  szDataType_t type = szBfloat16;
  CodebookChoice codebook;
  bool crc = true;  // frames on disk are checked by default (--no-crc leaves the checksums out)
  std::string input, output;
};

struct DecompressOptions {
  std::string input, output;
};

void runCompress(const CompressOptions& o) {
  TensorData d = readTensorFile(o.input, o.type);  // a FIFO or device input is refused first
  std::vector<std::string> inputs = {o.input};
  if (!o.codebook.calibrates() && o.codebook.value != "default") inputs.push_back(o.codebook.value);  // a file
  checkOutputIsNoInput(o.output, inputs);
  szHistogram_t hist;
  check(szHistogramInit(&hist, o.type), "histogram");
  if (o.codebook.calibrates()) check(szHistogramAccumulate(&hist, d.bytes.data(), d.count), "histogram");
  const szCodebook_t cb = o.codebook.resolve(hist);
  size_t max = 0, bytes = 0;
  check(szEncodeMaxSize(d.count, o.type, &max), o.input);
  std::vector<uint8_t> frame(max);
  check(szEncode(d.bytes.data(), d.count, o.type, &cb, o.crc ? SZ_ENCODE_CRC : 0, frame.data(),
                 frame.size(), &bytes),
        o.input);
  szFrameInfo_t info;
  check(szFrameGetInfo(frame.data(), bytes, &info), "checking the new frame");
  writeFileBytes(o.output, frame.data(), bytes);
  fmt::print("{} -> {}: {} {} elements, {} -> {} bytes, ratio {}, {} escapes{}{}, codebook {}: {}\n", o.input,
             o.output, d.count, dtypeName(o.type), d.bytes.size(), bytes,
             ratioText(d.bytes.size(), bytes), info.escapeCount, info.raw ? ", stored raw" : "",
             o.crc ? ", CRC32C" : "", o.codebook.describe(), joinInts(codebookExponents(cb)));
}

void runDecompress(const DecompressOptions& o) {
  // The header says how big the frame is: a file that is not a frame, or not exactly one, is
  // refused before its body is read.
  InputFile f(o.input);
  checkOutputIsNoInput(o.output, {o.input});
  if (f.size() == 0) f.fail("empty file");
  uint8_t header[SZ_FRAME_HEADER_BYTES] = {};
  f.read(0, header, std::min<uint64_t>(f.size(), sizeof(header)));
  sz::FrameHeader h;
  sz::FrameLayout layout;
  uint64_t frameBytes = 0;
  if (f.size() < sizeof(header)) f.fail(fmt::format("not a SplitZip frame: {} bytes", f.size()));
  sz::readHeader(header, &h);
  sz::HeaderError e = sz::checkHeader(h, f.size(), &layout, &frameBytes);
  if (e != sz::kHeaderOk) f.fail(sz::headerErrorString(e));
  if (frameBytes != f.size())
    f.fail(fmt::format("{} bytes after the end of the frame ({} bytes)", f.size() - frameBytes, frameBytes));
  std::vector<uint8_t> frame(f.size());
  f.read(0, frame.data(), frame.size());
  szFrameInfo_t info;
  check(szFrameGetInfo(frame.data(), frame.size(), &info), o.input);
  // A valid header bounds count * size by the frame size, so this allocation is bounded too.
  std::vector<uint8_t> out(info.count * szTypeSize(info.type));
  check(szDecode(frame.data(), frame.size(), out.data(), out.size(), nullptr, nullptr), o.input);
  frame = std::vector<uint8_t>();
  writeFileBytes(o.output, out.data(), out.size());
  fmt::print("{} -> {}: {} {} elements, {} -> {} bytes{}\n", o.input, o.output, info.count,
             dtypeName(info.type), f.size(), out.size(),
             info.crc ? "" : " (unchecked: the frame has no CRC32C, so corruption cannot be detected)");
}

}  // namespace

void addCodecCommands(CLI::App& app) {
  auto c = std::make_shared<CompressOptions>();
  CLI::App* compress = app.add_subcommand("compress", "compress a tensor file into a SplitZip frame");
  addDtypeOption(*compress, &c->type);
  addCodebookOption(*compress, &c->codebook);
  compress->add_flag("--crc,!--no-crc", c->crc,
                     "store CRC32C checksums of header and payload (the default; --no-crc leaves them out, and "
                     "decompress then cannot tell a corrupted frame)");
  compress->add_option("input", c->input, "raw, .npy or .safetensors file")->required();
  compress->add_option("output", c->output, "frame file to write")->required();
  compress->callback([c] { runCompress(*c); });

  auto d = std::make_shared<DecompressOptions>();
  CLI::App* decompress = app.add_subcommand("decompress", "decode a SplitZip frame into raw little-endian elements");
  decompress->add_option("input", d->input, "frame file")->required();
  decompress->add_option("output", d->output, "raw element file to write")->required();
  decompress->callback([d] { runDecompress(*d); });
}

}  // namespace sztool
