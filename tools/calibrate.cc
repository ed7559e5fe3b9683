// `splitzip calibrate`: one exponent histogram over all input files, its top-16 codebook
// (paper §3.3), written as a codebook file for `compress --codebook` and szCodebookLoad.
#include <fmt/format.h>

#include <memory>

#include "cli_common.h"
#include "commands.h"
#include "tensor_file.h"

namespace sztool {
namespace {

struct CalibrateOptions {
  szDataType_t type = szBfloat16;
  std::string output;
  std::vector<std::string> files;
};

void runCalibrate(const CalibrateOptions& o) {
  szHistogram_t hist;
  check(szHistogramInit(&hist, o.type), "histogram");
  uint64_t count = 0;
  for (const std::string& path : o.files) {
    TensorData d = readTensorFile(path, o.type);
    check(szHistogramAccumulate(&hist, d.bytes.data(), d.count), "histogram");
    count += d.count;
  }
  if (count == 0) throw CliError("no elements to calibrate from: the input files are empty");
  checkOutputIsNoInput(o.output, o.files);
  szCodebook_t cb;
  check(szCodebookFromHistogram(&hist, &cb), "calibration");
  checkOutputPath(o.output);  // a FIFO or device is refused here, not waited on
  check(szCodebookSave(&cb, o.output.c_str()), "saving the codebook");
  uint64_t covered = 0;
  for (int i = 0; i < cb.used; ++i) covered += hist.counts[cb.exponents[i]];
  fmt::print("{}: {} codebook from {} elements, used {}, covers {:.6f}%: {}\n", o.output,
             dtypeName(o.type), count, cb.used, count ? 100.0 * double(covered) / double(count) : 0.0,
             joinInts(codebookExponents(cb)));
}

}  // namespace

void addCalibrateCommand(CLI::App& app) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand("calibrate", "build a codebook from the exponents of the inputs");
  addDtypeOption(*cmd, &o->type);
  cmd->add_option("-o,--output", o->output, "codebook file to write")->required();
  cmd->add_option("files", o->files, "raw, .npy or .safetensors files")->required();
  cmd->callback([o] { runCalibrate(*o); });
}

}  // namespace sztool
