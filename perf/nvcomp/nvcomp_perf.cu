// nvcomp_perf: NVIDIA nvCOMP's GPU codecs (Bitcomp, Cascaded, LZ4, ANS) on the same KV-cache data
// as SplitZip, so the two can be compared side by side. Reads a raw little-endian element file,
// repeats it up to --elems elements (a few MB of real KV data would fit in L2 and say nothing about
// throughput on a real cache), and reports per codec the compression ratio and the compress and
// decompress throughput in uncompressed bytes per second (GB = 1e9 bytes), the median of --iters
// runs timed with CUDA events around the nvCOMP call alone, next to a device-to-device copy of the
// same tensor measured in the same run. Every codec's last decompression is checked bit-exact on
// the host.
//
// Uses nvCOMP's high-level manager API (nvcomp/*.hpp) with its native bitstream (nvCOMP's header
// plus 64 KiB chunks compressed independently), since that is how an application would call it.
// Built by build.sh, not by the Makefile: nvCOMP is not part of this repository.
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <nvcomp.hpp>
#include <nvcomp/ans.hpp>
#include <nvcomp/bitcomp.hpp>
#include <nvcomp/cascaded.hpp>
#include <nvcomp/lz4.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// The chunk size nvCOMP's headers recommend for decompression throughput.
constexpr size_t kChunkBytes = 64 * 1024;
// Default tensor size, the same number of bytes for every element type.
constexpr size_t kDefaultBytes = size_t(512) << 20;

void cudaOk(cudaError_t err, const char* call, int line) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("CUDA error '") + cudaGetErrorString(err) + "' in " + call +
                             " (line " + std::to_string(line) + ")");
}
#define CUDA_OK(call) cudaOk((call), #call, __LINE__)

// Destructors cannot throw, so a failed CUDA release is reported and otherwise ignored.
void releaseOk(cudaError_t err, const char* what) {
  if (err != cudaSuccess) fprintf(stderr, "warning: %s failed: %s\n", what, cudaGetErrorString(err));
}

class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) { CUDA_OK(cudaMalloc(&ptr_, bytes)); }
  ~DeviceBuffer() { releaseOk(cudaFree(ptr_), "cudaFree"); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  uint8_t* get() const { return static_cast<uint8_t*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

class Stream {
 public:
  Stream() { CUDA_OK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { releaseOk(cudaStreamDestroy(s_), "cudaStreamDestroy"); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class EventPair {
 public:
  EventPair() {
    CUDA_OK(cudaEventCreate(&start));
    CUDA_OK(cudaEventCreate(&stop));
  }
  ~EventPair() {
    releaseOk(cudaEventDestroy(start), "cudaEventDestroy");
    releaseOk(cudaEventDestroy(stop), "cudaEventDestroy");
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  cudaEvent_t start = nullptr, stop = nullptr;
};

enum class DType { bf16, fp8e5m2 };

struct Options {
  std::string data, json;
  DType type = DType::bf16;
  size_t elems = 0;  // 0: kDefaultBytes worth
  int iters = 20;
  int warmup = 3;
};

size_t elemBytes(DType t) { return t == DType::bf16 ? 2 : 1; }
const char* typeName(DType t) { return t == DType::bf16 ? "bf16" : "fp8e5m2"; }

[[noreturn]] void usage(const std::string& problem, int status = 2) {
  fprintf(status ? stderr : stdout,
          "%s\nusage: nvcomp_perf --data FILE --type bf16|fp8e5m2 [--elems N[K|M|G]] [--iters 20] "
          "[--warmup 3] [--json OUT]\n"
          "  FILE: raw little-endian elements, repeated up to N elements (default: 512 MiB worth)\n"
          "exit status 1 if any codec failed or decompressed wrongly\n",
          problem.c_str());
  exit(status);
}

// Non-negative integer with an optional binary K/M/G suffix ("256M" = 256 * 2^20).
size_t parseCount(const std::string& flag, const char* text) {
  errno = 0;
  char* end = nullptr;
  unsigned long long v = strtoull(text, &end, 10);
  if (end == text || errno != 0 || text[0] == '-') usage("bad number for " + flag + ": " + text);
  int shift = 0;
  if (*end == 'K') shift = 10, ++end;
  else if (*end == 'M') shift = 20, ++end;
  else if (*end == 'G') shift = 30, ++end;
  if (*end != '\0' || v > (~0ull >> shift)) usage("bad number for " + flag + ": " + text);
  return size_t(v << shift);
}

int parseRuns(const std::string& flag, const char* text) {
  const size_t n = parseCount(flag, text);
  if (n > 100000) usage(flag + " above 100000: " + text);
  return int(n);
}

Options parseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") usage("nvCOMP side-by-side benchmark", 0);
    if (i + 1 >= argc) usage("missing value for " + flag);
    const char* v = argv[++i];
    if (flag == "--data") o.data = v;
    else if (flag == "--json") o.json = v;
    else if (flag == "--type") {
      if (std::string(v) == "bf16") o.type = DType::bf16;
      else if (std::string(v) == "fp8e5m2") o.type = DType::fp8e5m2;
      else usage(std::string("unknown --type ") + v);
    } else if (flag == "--elems") o.elems = parseCount(flag, v);
    else if (flag == "--iters") o.iters = parseRuns(flag, v);
    else if (flag == "--warmup") o.warmup = parseRuns(flag, v);
    else usage("unknown option " + flag);
  }
  if (o.data.empty()) usage("--data is required");
  if (o.elems == 0) o.elems = kDefaultBytes / elemBytes(o.type);
  if (o.elems > (size_t(1) << 40)) usage("--elems above 2^40");
  if (o.iters < 1) usage("--iters must be at least 1");
  return o;
}

// The file repeated (the last copy cut short) up to `bytes`.
std::vector<uint8_t> loadTiled(const std::string& path, size_t elemSize, size_t bytes, size_t* fileElems) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw std::runtime_error("cannot open " + path);
  const size_t fileBytes = size_t(f.tellg());
  if (fileBytes == 0 || fileBytes % elemSize != 0)
    throw std::runtime_error(path + ": size " + std::to_string(fileBytes) + " is not a positive multiple of " +
                             std::to_string(elemSize) + " bytes");
  std::vector<uint8_t> out(bytes);
  f.seekg(0);
  if (!f.read(reinterpret_cast<char*>(out.data()), std::streamsize(std::min(fileBytes, bytes))))
    throw std::runtime_error("cannot read " + path);
  for (size_t done = fileBytes; done < bytes; done += fileBytes)
    memcpy(out.data() + done, out.data(), std::min(fileBytes, bytes - done));
  *fileElems = fileBytes / elemSize;
  return out;
}

// Median of `iters` timed runs of `op`, after `warmup` untimed ones (which also let nvCOMP allocate
// its scratch memory). CUDA events on `stream` bracket `op` alone: `prepare` is enqueued before
// the start event, and `check` runs on the host once the run is complete.
float medianMs(cudaStream_t stream, const Options& o, const std::function<void()>& prepare,
               const std::function<void()>& op, const std::function<void()>& check) {
  EventPair ev;
  std::vector<float> ms;
  for (int i = 0; i < o.warmup + o.iters; ++i) {
    prepare();
    CUDA_OK(cudaEventRecord(ev.start, stream));
    op();
    CUDA_OK(cudaEventRecord(ev.stop, stream));
    CUDA_OK(cudaEventSynchronize(ev.stop));
    check();
    if (i < o.warmup) continue;
    float t = 0;
    CUDA_OK(cudaEventElapsedTime(&t, ev.start, ev.stop));
    ms.push_back(t);
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

void statusOk(nvcompStatus_t status, const char* what) {
  if (status != nvcompSuccess)
    throw std::runtime_error(std::string(what) + " status " + std::to_string(int(status)) + " (" +
                             nvcompGetStatusString(status) + ")");
}

struct Codec {
  const char* name;
  std::function<std::unique_ptr<nvcomp::nvcompManagerBase>(cudaStream_t)> make;
};

// The four codecs with nvCOMP's data-type hint for the element type. Option structs are
// value-initialized first because their reserved bytes must be zero.
std::vector<Codec> codecs(DType t) {
  const bool bf16 = t == DType::bf16;
  // Bitcomp, Cascaded and LZ4 see the values as integers of the element's width (Bitcomp's
  // FLOAT16 means IEEE half, whose layout bf16 does not share).
  const nvcompType_t intType = bf16 ? NVCOMP_TYPE_USHORT : NVCOMP_TYPE_UCHAR;
  // ANS's FLOAT16 covers "all half-precision formats"; its only 1-byte float type is E4M3, so
  // E5M2 goes in as generic bytes.
  const nvcompType_t ansType = bf16 ? NVCOMP_TYPE_FLOAT16 : NVCOMP_TYPE_UCHAR;
  return {
      {"bitcomp",
       [=](cudaStream_t s) {
         nvcompBatchedBitcompCompressOpts_t c{};
         c.algorithm = 0;  // the default algorithm, best ratio; 1 targets sparse data
         c.data_type = intType;
         c.mode = BITCOMP_LOSSLESS;
         nvcompBatchedBitcompDecompressOpts_t d{};
         d.backend = NVCOMP_DECOMPRESS_BACKEND_DEFAULT;
         return std::unique_ptr<nvcomp::nvcompManagerBase>(new nvcomp::BitcompManager(kChunkBytes, c, d, s));
       }},
      {"cascaded",
       [=](cudaStream_t s) {
         nvcompBatchedCascadedCompressOpts_t c = nvcompBatchedCascadedCompressDefaultOpts;
         c.common_opts.data_type = intType;
         // Naming the same options for decompression lets nvCOMP launch only the kernels they need.
         nvcompBatchedCascadedDecompressOpts_t d{};
         d.backend = NVCOMP_DECOMPRESS_BACKEND_DEFAULT;
         d.common_opts = c.common_opts;
         return std::unique_ptr<nvcomp::nvcompManagerBase>(new nvcomp::CascadedManager(kChunkBytes, c, d, s));
       }},
      {"lz4",
       [=](cudaStream_t s) {
         // Plain LZ4, no bitshuffle; the decompression data type matters only with bitshuffle.
         nvcompBatchedLZ4CompressOpts_t c{};
         c.data_type = intType;
         c.bitshuffle_mode = NVCOMP_BITSHUFFLE_NONE;
         nvcompBatchedLZ4DecompressOpts_t d{};
         d.backend = NVCOMP_DECOMPRESS_BACKEND_DEFAULT;
         d.data_type = intType;
         d.bitshuffle_mode = NVCOMP_BITSHUFFLE_NONE;
         return std::unique_ptr<nvcomp::nvcompManagerBase>(new nvcomp::LZ4Manager(kChunkBytes, c, d, s));
       }},
      {"ans",
       [=](cudaStream_t s) {
         nvcompBatchedANSCompressOpts_t c{};
         c.type = nvcomp_rANS;
         c.data_type = ansType;
         // Naming the type for decompression too selects its specialized kernel.
         nvcompBatchedANSDecompressOpts_t d{};
         d.backend = NVCOMP_DECOMPRESS_BACKEND_DEFAULT;
         d.data_type = ansType;
         return std::unique_ptr<nvcomp::nvcompManagerBase>(new nvcomp::ANSManager(kChunkBytes, c, d, s));
       }},
  };
}

struct Result {
  std::string name, error;  // error: empty unless the codec failed
  size_t compBytes = 0;
  double ratio = 0, encodeGBs = 0, decodeGBs = 0;
  bool exact = false;
};

Result measure(const Codec& codec, const Options& o, cudaStream_t stream, const uint8_t* dIn, uint8_t* dOut,
               const std::vector<uint8_t>& host) {
  Result r;
  r.name = codec.name;
  const size_t bytes = host.size();
  try {
    std::unique_ptr<nvcomp::nvcompManagerBase> mgr = codec.make(stream);
    const nvcomp::CompressionConfig cc = mgr->configure_compression(bytes);
    DeviceBuffer comp(cc.max_compressed_buffer_size);
    const float encMs = medianMs(
        stream, o, [] {}, [&] { mgr->compress(dIn, comp.get(), cc); },
        [&] { statusOk(*cc.get_status(), "compress"); });
    r.compBytes = mgr->get_compressed_output_size(comp.get());

    // Parsing the header synchronizes, so it stays outside the timed region.
    const nvcomp::DecompressionConfig dc = mgr->configure_decompression(comp.get());
    if (dc.decomp_data_size != bytes)
      throw std::runtime_error("header says " + std::to_string(dc.decomp_data_size) + " bytes, expected " +
                               std::to_string(bytes));
    // Poisoning the output before each run keeps a run that writes nothing from passing the check.
    const float decMs = medianMs(
        stream, o, [&] { CUDA_OK(cudaMemsetAsync(dOut, 0xA5, bytes, stream)); },
        [&] { mgr->decompress(dOut, comp.get(), dc); }, [&] { statusOk(*dc.get_status(), "decompress"); });

    std::vector<uint8_t> back(bytes);
    CUDA_OK(cudaMemcpy(back.data(), dOut, bytes, cudaMemcpyDeviceToHost));
    r.exact = memcmp(back.data(), host.data(), bytes) == 0;
    r.ratio = double(bytes) / double(r.compBytes);
    r.encodeGBs = double(bytes) / (encMs * 1e6);
    r.decodeGBs = double(bytes) / (decMs * 1e6);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += char(c);
    else if (c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += char(c);
  }
  return out + "\"";
}

void writeJson(const std::string& path, const Options& o, const std::string& device, const std::string& version,
               size_t bytes, double copyGBs, const std::vector<Result>& results) {
  FILE* f = fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error("cannot write " + path);
  fprintf(f,
          "{\"tool\": \"nvcomp_perf\", \"nvcomp\": %s, \"device\": %s, \"file\": %s, \"type\": \"%s\", "
          "\"elems\": %zu, \"bytes\": %zu, \"chunk_bytes\": %zu, \"iters\": %d, \"warmup\": %d,\n"
          " \"copy_gbs\": %.3f,\n \"algos\": {",
          jsonString(version).c_str(), jsonString(device).c_str(), jsonString(o.data).c_str(), typeName(o.type),
          o.elems, bytes, kChunkBytes, o.iters, o.warmup, copyGBs);
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    fprintf(f, "%s\n  \"%s\": ", i ? "," : "", r.name.c_str());
    if (!r.error.empty())
      fprintf(f, "{\"ok\": false, \"error\": %s}", jsonString(r.error).c_str());
    else
      fprintf(f, "{\"ratio\": %.6f, \"comp_bytes\": %zu, \"encode_gbs\": %.3f, \"decode_gbs\": %.3f, \"ok\": %s}",
              r.ratio, r.compBytes, r.encodeGBs, r.decodeGBs, r.exact ? "true" : "false");
  }
  fprintf(f, "\n }\n}\n");
  if (fclose(f) != 0) throw std::runtime_error("cannot write " + path);
}

int run(const Options& o) {
  nvcompProperties_t props{};
  statusOk(nvcompGetProperties(&props), "nvcompGetProperties");
  const std::string version = std::to_string(NVCOMP_MAJOR_FROM_SEMVER(props.version)) + "." +
                              std::to_string(NVCOMP_MINOR_FROM_SEMVER(props.version)) + "." +
                              std::to_string(NVCOMP_PATCH_FROM_SEMVER(props.version));
  int dev = 0;
  CUDA_OK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CUDA_OK(cudaGetDeviceProperties(&prop, dev));

  size_t fileElems = 0;
  const std::vector<uint8_t> host = loadTiled(o.data, elemBytes(o.type), o.elems * elemBytes(o.type), &fileElems);
  const size_t bytes = host.size();
  printf("nvCOMP %s on %s (sm_%d%d): %s, %zu elements (%zu bytes) from %zu in %s, %zu KiB chunks,\n"
         "median of %d runs after %d warm-up; GB/s = 1e9 uncompressed bytes per second\n",
         version.c_str(), prop.name, prop.major, prop.minor, typeName(o.type), o.elems, bytes, fileElems,
         o.data.c_str(), kChunkBytes >> 10, o.iters, o.warmup);

  Stream stream;
  DeviceBuffer dIn(bytes), dOut(bytes);
  CUDA_OK(cudaMemcpy(dIn.get(), host.data(), bytes, cudaMemcpyHostToDevice));

  const float copyMs = medianMs(
      stream.get(), o, [] {},
      [&] { CUDA_OK(cudaMemcpyAsync(dOut.get(), dIn.get(), bytes, cudaMemcpyDeviceToDevice, stream.get())); },
      [] {});
  const double copyGBs = double(bytes) / (copyMs * 1e6);
  printf("device-to-device copy: %.1f GB/s\n\n%-9s %8s %10s %12s  %s\n", copyGBs, "algo", "ratio", "comp_GB/s",
         "decomp_GB/s", "check");

  std::vector<Result> results;
  for (const Codec& c : codecs(o.type)) {
    Result r = measure(c, o, stream.get(), dIn.get(), dOut.get(), host);
    if (r.error.empty())
      printf("%-9s %8.4f %10.1f %12.1f  %s\n", r.name.c_str(), r.ratio, r.encodeGBs, r.decodeGBs,
             r.exact ? "ok" : "wrong");
    else
      printf("%-9s error: %s\n", r.name.c_str(), r.error.c_str());
    fflush(stdout);
    results.push_back(std::move(r));
  }
  if (!o.json.empty()) writeJson(o.json, o, prop.name, version, bytes, copyGBs, results);
  for (const Result& r : results)
    if (!r.error.empty() || !r.exact) return 1;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parseArgs(argc, argv);
  try {
    return run(o);
  } catch (const std::exception& e) {
    fprintf(stderr, "nvcomp_perf: %s\n", e.what());
    return 1;
  }
}
