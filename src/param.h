// Environment parameters, NCCL param.h style: each knob has one definition, a default and a
// cached getter. SZ_PARAM(CpuThreads, "CPU_THREADS", 0) defines int64_t szParamCpuThreads()
// reading SZ_CPU_THREADS once.
#pragma once

#include <cstdint>

int64_t szLoadParam(const char* env, int64_t deflt);

#define SZ_PARAM(name, env, deflt)                                  \
  inline int64_t szParam##name() {                                  \
    static const int64_t value = szLoadParam("SZ_" env, (deflt));   \
    return value;                                                   \
  }

// Threads for the CPU codec; 0 = all online cores.
SZ_PARAM(CpuThreads, "CPU_THREADS", 0)
// Inputs below this many bytes are encoded/decoded by the calling thread alone.
SZ_PARAM(CpuParallelBytes, "CPU_PARALLEL_BYTES", 4 << 20)
// 0 disables the AVX2 fast path (forces the portable codec).
SZ_PARAM(CpuSimd, "CPU_SIMD", 1)
