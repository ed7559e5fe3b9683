// The perf tests' data: the --data file's elements, or generated values the same in every
// process (fixed seed), tiled to each message size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "splitzip.h"

namespace szperf {

// The elements of `type` in a raw, .npy or .safetensors file (the CLI's readers).
std::vector<uint8_t> readData(const std::string& path, szDataType_t type);

// BF16 and float like a KV cache (normal, sigma 0.5; BF16 rounded to nearest even), random
// bytes for the other types; at most 16 MiB, which tiling repeats (a per-slice codec without a
// dictionary cannot exploit the repetition).
std::vector<uint8_t> generateData(szDataType_t type, size_t maxBytes);

// Fills `bytes` of `dst` with `pattern` repeated.
void tile(uint8_t* dst, size_t bytes, const std::vector<uint8_t>& pattern);

}  // namespace szperf
