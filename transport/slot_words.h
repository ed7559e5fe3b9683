// How a proxy thread reads and writes the slot protocol's words (kernels/slot_format.h) that
// kernels or a NIC write concurrently: acquire loads, release stores, and error words where the
// first error wins. Host side only; for every wire with a proxy.
#pragma once

#include <cstdint>

namespace sz {

inline uint64_t slotLoadAcquire(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline void slotStoreRelease(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
inline int slotLoadError(const int* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
// Sets the error word `p` to `code` unless it already holds an error.
inline void slotRaiseError(int* p, int code) {
  int zero = 0;
  __atomic_compare_exchange_n(p, &zero, code, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

}  // namespace sz
