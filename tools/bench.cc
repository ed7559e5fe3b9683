// `splitzip bench`: CPU encode / decode throughput (uncompressed bytes per second, median of
// the iterations) and ratio, next to memcpy of the same buffer measured in the same process.
// The library reads SZ_CPU_THREADS once, at its first parallel call, so each mode (one core,
// then all cores) runs in its own forked child that sets the variable before touching the codec;
// the child sends its numbers back as JSON over a pipe.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_common.h"
#include "codec/dtype.h"
#include "codec/parallel.h"
#include "commands.h"
#include "tensor_file.h"

namespace sztool {
namespace {

struct BenchOptions {
  szDataType_t type = szBfloat16;
  int threads = 0;
  int iters = 10;
  bool json = false;
  std::string file;
};

// Median wall time of `iters` calls of fn, after one untimed call that faults pages in.
double medianSeconds(int iters, const std::function<void()>& fn) {
  fn();
  std::vector<double> t(iters);
  for (double& s : t) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::nth_element(t.begin(), t.begin() + iters / 2, t.end());
  return t[iters / 2];
}

nlohmann::json measureMode(const TensorData& d, szDataType_t type, int iters, int threads) {
  setenv("SZ_CPU_THREADS", std::to_string(threads).c_str(), 1);
  // The codec would keep an input under SZ_CPU_PARALLEL_BYTES on one thread, while the memcpy
  // next to it uses them all: an all-cores row measures the codec on all of them too.
  if (threads > 1) setenv("SZ_CPU_PARALLEL_BYTES", "0", 1);
  const double gb = double(d.bytes.size()) / 1e9;
  size_t max = 0, frameBytes = 0;
  check(szEncodeMaxSize(d.count, type, &max), "szEncodeMaxSize");
  std::vector<uint8_t> frame(max), out(d.bytes.size());
  double enc = medianSeconds(iters, [&] {
    check(szEncode(d.bytes.data(), d.count, type, nullptr, 0, frame.data(), frame.size(), &frameBytes),
          "szEncode");
  });
  double dec = medianSeconds(iters, [&] {
    check(szDecode(frame.data(), frameBytes, out.data(), out.size(), nullptr, nullptr), "szDecode");
  });
  if (out != d.bytes) throw CliError("decoded data differs from the input (a bug: please report it)");
  // The memcpy in as many ranges as the codec splits the input into (at most one a chunk, so a
  // small input's memcpy is not timed across idle threads), by the codec's own fork-join.
  const int ranges = sz::parallelRanges((d.count + sz::kChunkElems - 1) / sz::kChunkElems, d.bytes.size());
  double copy = medianSeconds(iters, [&] {
    sz::parallelFor(out.size(), ranges,
                    [&](int, uint64_t b0, uint64_t b1) { memcpy(out.data() + b0, d.bytes.data() + b0, b1 - b0); });
  });
  return {{"threads", threads},
          {"encode_gbps", gb / enc},
          {"decode_gbps", gb / dec},
          {"memcpy_gbps", gb / copy},
          {"frame_bytes", frameBytes}};
}

// Runs fn in a forked child and returns its JSON; the child's CliError becomes ours.
nlohmann::json inChild(const std::function<nlohmann::json()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) throw CliError(fmt::format("pipe: {}", strerror(errno)));
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) throw CliError(fmt::format("fork: {}", strerror(errno)));
  if (pid == 0) {
    close(fds[0]);
    std::string msg;
    try {
      msg = fn().dump();
    } catch (const std::exception& e) {
      msg = nlohmann::json{{"error", e.what()}}.dump();
    }
    for (size_t done = 0; done < msg.size();) {
      ssize_t n = write(fds[1], msg.data() + done, msg.size() - done);
      if (n <= 0) _exit(1);
      done += size_t(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) msg.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw CliError(fmt::format("benchmark process failed ({})",
                               WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exit status"));
  nlohmann::json r = nlohmann::json::parse(msg, nullptr, false);
  if (r.is_discarded()) throw CliError("benchmark process sent no result");
  if (r.contains("error")) throw CliError(r["error"].get<std::string>());
  return r;
}

void runBench(const BenchOptions& o) {
  TensorData d = readTensorFile(o.file, o.type);
  if (d.count == 0) throw CliError(fmt::format("{}: no elements to benchmark", o.file));
  int all = o.threads > 0 ? o.threads : int(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> threadCounts = {1};
  if (all > 1) threadCounts.push_back(all);
  nlohmann::json modes = nlohmann::json::array();
  for (int threads : threadCounts) {
    nlohmann::json m = inChild([&] { return measureMode(d, o.type, o.iters, threads); });
    m["mode"] = threads == 1 ? "single-core" : "all-cores";
    modes.push_back(m);
  }
  const uint64_t frameBytes = modes[0]["frame_bytes"].get<uint64_t>();
  const double ratio = compressionRatio(d.bytes.size(), frameBytes);
  if (o.json) {
    nlohmann::json out = {{"file", o.file},          {"dtype", dtypeName(o.type)},
                          {"elements", d.count},     {"raw_bytes", d.bytes.size()},
                          {"frame_bytes", frameBytes}, {"ratio", ratio},
                          {"iters", o.iters},        {"modes", modes}};
    std::cout << out.dump(2) << '\n';
    return;
  }
  fmt::print("{}: {} {} elements, {} -> {} bytes, ratio {:.4f}; GB/s of uncompressed data, median "
             "of {} iterations\n",
             o.file, d.count, dtypeName(o.type), d.bytes.size(), frameBytes, ratio, o.iters);
  fmt::print("{:<12} {:>7} {:>11} {:>11} {:>11} {:>14} {:>14}\n", "mode", "threads", "encode",
             "decode", "memcpy", "encode/memcpy", "decode/memcpy");
  for (const auto& m : modes) {
    double enc = m["encode_gbps"], dec = m["decode_gbps"], copy = m["memcpy_gbps"];
    fmt::print("{:<12} {:>7} {:>11.3f} {:>11.3f} {:>11.3f} {:>13.1f}% {:>13.1f}%\n",
               m["mode"].get<std::string>(), m["threads"].get<int>(), enc, dec, copy,
               100 * enc / copy, 100 * dec / copy);
  }
}

}  // namespace

void addBenchCommand(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "CPU encode/decode throughput and ratio next to memcpy, on one core and on all "
               "cores (the all-cores mode splits every input, SZ_CPU_PARALLEL_BYTES=0)");
  addDtypeOption(*cmd, &o->type);
  cmd->add_option("--threads", o->threads, "threads of the all-cores mode (default 0: all cores; at most 1024)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--iters", o->iters, "timed iterations per measurement (default 10; 1 to 100000)")
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("--json", o->json, "print JSON instead of a table");
  cmd->add_option("file", o->file, "raw, .npy or .safetensors file")->required();
  cmd->callback([o] { runBench(*o); });
}

}  // namespace sztool
