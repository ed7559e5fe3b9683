// Memory of the ib wire, allocated and registered once per connection (never per operation).
// Device slots (for the slot kernels): rings in GPU memory registered through dma-buf (GPUDirect
// RDMA: the NIC reads and writes the GPU's memory; cuMemGetHandleForAddressRange +
// ibv_reg_dmabuf_mr) where the GPU, the driver and rdma-core all support it and SZ_IB_GDR is not
// 0, else in pinned host memory that the kernels address over PCIe (ibv_reg_mr); their control
// words in pinned host memory. Host slots (for the CPU codec): plain page-aligned host memory,
// registered with ibv_reg_mr, no CUDA at all (a rank without a GPU uses them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "transport/ib_devices.h"

// Where a buffer lives: GPU memory if it can be registered (else pinned), pinned host memory the
// kernels map, or plain host memory.
enum class szIbMemory { kGpu, kPinned, kHost };

struct szIbBuffer {
  uint8_t* addr = nullptr;    // what the NIC addresses (the device pointer for GPU memory)
  uint8_t* kernel = nullptr;  // what the kernels address (the host's address for plain memory)
  size_t bytes = 0;
  bool gpu = false;
  bool host = false;          // plain host memory (szIbMemory::kHost)
  std::vector<ibv_mr*> mrs;   // one per port, in the ports' order
};

// Whether this GPU can take GPUDirect RDMA writes for the slot protocol: it supports GPUDirect
// RDMA and its remote writes are ordered for the GPU itself or can be flushed from the host.
// *needFlush: the receiving proxy must call szIbFlushGpuWrites before it publishes a slot.
bool szIbGpuDirectUsable(bool* needFlush);
// Makes remote writes into this GPU's memory visible to its kernels (the proxy's thread must
// have the device current).
void szIbFlushGpuWrites();

// A zeroed buffer of `bytes`, registered on every port with `access` (0: local reads only), in
// `memory`: kGpu falls back to pinned host memory where dma-buf registration does not work on
// every port. The first `registered` bytes only are registered (0: all). Errors:
// szUnhandledCudaError, szSystemError (an allocation or a registration failed).
szResult_t szIbAlloc(const szIbVerbs* verbs, const std::vector<szIbPort>& ports, size_t bytes, size_t registered,
                     szIbMemory memory, int access, szIbBuffer* buffer);
void szIbFree(const szIbVerbs* verbs, szIbBuffer* buffer);
