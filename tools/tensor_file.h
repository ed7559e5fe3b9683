// Input readers of the `splitzip` tool: the elements of one tensor file as raw little-endian
// bytes. The format follows the file name:
//   *.npy          NumPy array (format 1.0-3.0, C order, a descr matching the type: BF16 '<u2',
//                  '<i2', '<V2', '|V2' or 'bfloat16' (ml_dtypes); FP32 '<f4', '<u4', '<i4',
//                  '<V4', '|V4'; FP8 E5M2 '|u1', '|i1', '<u1', '<i1', '|V1', '<V1', '<f1', '|f1'
//                  (ml_dtypes' float8) or 'float8_e5m2'; FP8 E4M3 the same bytes or
//                  'float8_e4m3fn'; FP16 '<f2', '<u2', '<i2', '<V2', '|V2');
//   *.safetensors  every tensor of the type (BF16, F32, F16, F8_E5M2, F8_E4M3), concatenated in the order of
//                  their data offsets;
//   anything else  raw little-endian elements.
// Every header field is bounds-checked against the file before anything is allocated, so a
// truncated or hostile file yields a CliError, never a crash or a huge allocation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "splitzip.h"

namespace sztool {

struct TensorData {
  std::vector<uint8_t> bytes;  // count * szTypeSize(type) bytes
  uint64_t count = 0;
};

TensorData readTensorFile(const std::string& path, szDataType_t type);

}  // namespace sztool
