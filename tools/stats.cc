// `splitzip stats`: the exponent statistics of paper Table 1 for each file (and for all files
// taken as one tensor): histogram, entropy, top-8/top-16 coverage, distinct exponents, escape
// rate and predicted ratio under the codebook and under the data's own top-16 (the oracle).
// The codebook is chosen as `compress` chooses it (--codebook auto, default or a file: with
// auto, each file's own top-16, as compress would write it). The predicted frame size is
// cross-checked by actually encoding each file.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "commands.h"
#include "exponent_stats.h"
#include "tensor_file.h"

namespace sztool {
namespace {

struct StatsOptions {
  szDataType_t type = szBfloat16;
  CodebookChoice codebook;
  bool json = false;
  std::vector<std::string> files;
};

double rate(uint64_t n, uint64_t total) { return total ? double(n) / double(total) : 0.0; }

uint64_t encodedFrameBytes(const TensorData& d, szDataType_t type, const szCodebook_t& cb) {
  size_t max = 0, bytes = 0;
  check(szEncodeMaxSize(d.count, type, &max), "szEncodeMaxSize");
  std::vector<uint8_t> frame(max);
  check(szEncode(d.bytes.data(), d.count, type, &cb, 0, frame.data(), frame.size(), &bytes), "szEncode");
  return bytes;
}

nlohmann::json toJson(const std::string& name, szDataType_t type, const szCodebook_t& cb,
                      const ExponentStats& s) {
  const uint64_t raw = s.count * szTypeSize(type);
  return {{"file", name},
          {"codebook", {{"used", cb.used}, {"exponents", codebookExponents(cb)}}},
          {"elements", s.count},
          {"raw_bytes", raw},
          {"histogram", s.histogram},
          {"entropy_bits", s.entropyBits},
          {"top8_coverage", s.top8Coverage},
          {"top16_coverage", s.top16Coverage},
          {"distinct_exponents", s.distinctExponents},
          {"escapes", s.escapes},
          {"escape_rate", rate(s.escapes, s.count)},
          {"predicted_frame_bytes", s.frameBytes},
          {"predicted_ratio", raw ? nlohmann::json(compressionRatio(raw, s.frameBytes)) : nlohmann::json()},
          {"oracle_codebook", codebookExponents(s.oracle)},
          {"oracle_escapes", s.oracleEscapes},
          {"oracle_escape_rate", rate(s.oracleEscapes, s.count)},
          {"oracle_predicted_ratio",
           raw ? nlohmann::json(compressionRatio(raw, s.oracleFrameBytes)) : nlohmann::json()},
          {"oracle_code_bits", codeBitsOf(s.oracle)},
          {"predicted_ratio_3bit", raw ? nlohmann::json(compressionRatio(raw, s.widthFrameBytes[0])) : nlohmann::json()},
          {"predicted_ratio_4bit", raw ? nlohmann::json(compressionRatio(raw, s.widthFrameBytes[1])) : nlohmann::json()}};
}

void printText(const nlohmann::json& r, const std::string& dtype) {
  fmt::print("{}: {} {} elements, {} bytes\n", r["file"].get<std::string>(),
             r["elements"].get<uint64_t>(), dtype, r["raw_bytes"].get<uint64_t>());
  const auto hist = r["histogram"].get<std::vector<uint64_t>>();
  const uint64_t n = r["elements"].get<uint64_t>();
  if (n == 0) {  // no exponent to count: no statistics, and no ratio to predict
    fmt::print("  no elements: no exponent statistics, no predicted ratio\n");
    return;
  }
  std::vector<int> order;
  for (size_t e = 0; e < hist.size(); ++e)
    if (hist[e]) order.push_back(int(e));
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return hist[a] > hist[b]; });
  fmt::print("  exponent histogram (exponent: share), most frequent first:\n");
  for (size_t i = 0; i < order.size(); ++i)
    fmt::print("{}{:3}: {:7.4f}%{}", i % 8 == 0 ? "   " : "  ", order[i],
               100.0 * rate(hist[order[i]], n), i % 8 == 7 || i + 1 == order.size() ? "\n" : "");
  fmt::print("  entropy {:.4f} bits, {} distinct exponents, top-8 coverage {:.4f}%, top-16 "
             "coverage {:.6f}%\n",
             r["entropy_bits"].get<double>(), r["distinct_exponents"].get<int>(),
             100 * r["top8_coverage"].get<double>(), 100 * r["top16_coverage"].get<double>());
  fmt::print("  codebook {} (used {}): escape rate {:.6f}% ({} escapes), predicted ratio {:.4f} ({} byte frame",
             joinInts(r["codebook"]["exponents"].get<std::vector<int>>()), r["codebook"]["used"].get<int>(),
             100 * r["escape_rate"].get<double>(), r["escapes"].get<uint64_t>(),
             r["predicted_ratio"].get<double>(), r["predicted_frame_bytes"].get<uint64_t>());
  fmt::print(r.contains("encoded_frame_bytes") ? ", encoding agrees)\n" : ")\n");
  fmt::print("  oracle {}-bit {}: escape rate {:.6f}%, predicted ratio {:.4f}\n", r["oracle_code_bits"].get<int>(),
             joinInts(r["oracle_codebook"].get<std::vector<int>>()),
             100 * r["oracle_escape_rate"].get<double>(), r["oracle_predicted_ratio"].get<double>());
  fmt::print("  predicted ratio by code width: 3-bit (top-8) {:.4f}, 4-bit (top-16) {:.4f}\n",
             r["predicted_ratio_3bit"].get<double>(), r["predicted_ratio_4bit"].get<double>());
}

void runStats(const StatsOptions& o) {
  szHistogram_t total;
  check(szHistogramInit(&total, o.type), "histogram");
  nlohmann::json files = nlohmann::json::array();
  for (const std::string& path : o.files) {
    TensorData d = readTensorFile(path, o.type);
    szHistogram_t hist;
    check(szHistogramInit(&hist, o.type), "histogram");
    check(szHistogramAccumulate(&hist, d.bytes.data(), d.count), "histogram");
    for (int e = 0; e < 256; ++e) total.counts[e] += hist.counts[e];
    const szCodebook_t cb = o.codebook.resolve(hist);
    ExponentStats s = exponentStats(hist, cb);
    uint64_t encoded = encodedFrameBytes(d, o.type, cb);
    if (encoded != s.frameBytes)
      throw CliError(fmt::format("{}: predicted frame size {} but szEncode wrote {} bytes (a bug: "
                                 "please report it)", path, s.frameBytes, encoded));
    files.push_back(toJson(path, o.type, cb, s));
    files.back()["encoded_frame_bytes"] = encoded;
  }
  const szCodebook_t allCb = o.codebook.resolve(total);  // auto: calibrated on all files
  nlohmann::json all = toJson("(all files as one tensor)", o.type, allCb, exponentStats(total, allCb));
  if (o.json) {
    nlohmann::json out = {{"dtype", dtypeName(o.type)},
                          {"codebook_source", o.codebook.describe()},
                          {"files", files},
                          {"total", all}};
    std::cout << out.dump(2) << '\n';
    return;
  }
  fmt::print("codebook: {}{}\n", o.codebook.describe(),
             o.codebook.calibrates() ? " (each file's own top-16 or 3-bit top-8, as compress writes it; --codebook default for the built-in)" : "");
  for (const auto& r : files) printText(r, dtypeName(o.type));
  if (files.size() > 1) printText(all, dtypeName(o.type));
}

}  // namespace

void addStatsCommand(CLI::App& app) {
  auto o = std::make_shared<StatsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "stats", "exponent histogram, entropy, top-k coverage, escape rate and predicted ratio");
  addDtypeOption(*cmd, &o->type);
  addCodebookOption(*cmd, &o->codebook);
  cmd->add_flag("--json", o->json, "print JSON instead of text");
  cmd->add_option("files", o->files, "raw, .npy or .safetensors files")->required();
  cmd->callback([o] { runStats(*o); });
}

}  // namespace sztool
