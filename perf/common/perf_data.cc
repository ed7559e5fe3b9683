// Test data of the perf tests (see perf_data.h).
#include "perf_data.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "perf_options.h"
#include "tools/cli_common.h"
#include "tools/tensor_file.h"

namespace szperf {

std::vector<uint8_t> readData(const std::string& path, szDataType_t type) {
  sztool::TensorData d;
  try {
    d = sztool::readTensorFile(path, type);
  } catch (const sztool::CliError& e) {
    throw SetupError(std::string("--data: ") + e.what());
  }
  if (d.bytes.empty()) throw SetupError("--data " + path + ": no " + typeName(type) + " elements (try -d)");
  return std::move(d.bytes);
}

std::vector<uint8_t> generateData(szDataType_t type, size_t maxBytes) {
  constexpr size_t kPatternBytes = 16 << 20;
  size_t es = szTypeSize(type);
  size_t bytes = std::max(es, std::min(maxBytes, kPatternBytes) / es * es);
  std::vector<uint8_t> out(bytes);
  std::mt19937_64 rng(0x535A5045);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  if (type == szBfloat16) {
    for (size_t i = 0; i < bytes / 2; ++i) {
      float v = normal(rng);
      uint32_t u;
      memcpy(&u, &v, sizeof(u));
      uint16_t bf = uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
      memcpy(&out[2 * i], &bf, 2);
    }
  } else if (type == szFloat32) {
    for (size_t i = 0; i < bytes / 4; ++i) {
      float v = normal(rng);
      memcpy(&out[4 * i], &v, 4);
    }
  } else {
    for (size_t i = 0; i < bytes; i += 8) {
      uint64_t r = rng();
      memcpy(&out[i], &r, std::min<size_t>(8, bytes - i));
    }
  }
  return out;
}

void tile(uint8_t* dst, size_t bytes, const std::vector<uint8_t>& pattern) {
  for (size_t i = 0; i < bytes; i += pattern.size()) memcpy(dst + i, pattern.data(), std::min(pattern.size(), bytes - i));
}

}  // namespace szperf
