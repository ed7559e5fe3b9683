// Calibration on the GPU (paper §3.3): the exponent histogram of device data, and its top-16
// codebook chosen on the device by the same function as the host's (codec/calibrate.h), so a
// device codebook is szCodebookFromHistogram's bit for bit. Stream-ordered, no host
// synchronization: a sender can recalibrate on the data it is about to encode (issue 13).
#pragma once

#include <cstddef>

#include "splitzip.h"

namespace sz {

// Device memory the histogram of calibrateAsync takes: 256 counters.
constexpr size_t kCalibrateCountsBytes = 256 * sizeof(unsigned long long);

// Adds the exponent histogram of `count` elements of `type` at device pointer `d_data` to the
// 256 device counters `d_counts` on `stream` (shared by szHistogramAsync and the encoder).
szResult_t launchHistogram(const void* d_data, size_t count, int type, unsigned long long* d_counts,
                           cudaStream_t stream);

// On `stream`: zeroes `d_counts` (kCalibrateCountsBytes of device memory, 8-byte aligned), fills
// it with the exponent histogram of `count` elements of the compressible `type` at device
// pointer `d_data` (any alignment), then writes its top-16 codebook to `d_codebook` (device
// memory, 4-byte aligned): type, used and exponents exactly as szCodebookFromHistogram gives
// for that histogram. Both stay valid for later work on `stream`; reuse them once it has run.
// Zero elements give the codebook of an empty histogram (used 1, padding around the centre).
// Errors (at enqueue): szInvalidArgument (NULL pointers, a type that is not compressed),
// szUnhandledCudaError.
szResult_t calibrateAsync(const void* d_data, size_t count, szDataType_t type, unsigned long long* d_counts,
                          szCodebook_t* d_codebook, cudaStream_t stream);

}  // namespace sz
