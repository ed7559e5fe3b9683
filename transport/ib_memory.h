// Memory of the ib wire, allocated and registered once per connection (never per operation):
// slot rings in GPU memory registered through dma-buf (GPUDirect RDMA: the NIC reads and writes
// the GPU's memory; cuMemGetHandleForAddressRange + ibv_reg_dmabuf_mr) where the GPU, the driver
// and rdma-core all support it and SZ_IB_GDR is not 0, else in pinned host memory that the
// kernels address over PCIe (ibv_reg_mr); control words always in pinned host memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "transport/ib_devices.h"

struct szIbBuffer {
  uint8_t* addr = nullptr;    // what the NIC addresses (the device pointer for GPU memory)
  uint8_t* kernel = nullptr;  // what the kernels address
  size_t bytes = 0;
  bool gpu = false;
  std::vector<ibv_mr*> mrs;   // one per port, in the ports' order
};

// Whether this GPU can take GPUDirect RDMA writes for the slot protocol: it supports GPUDirect
// RDMA and its remote writes are ordered for the GPU itself or can be flushed from the host.
// *needFlush: the receiving proxy must call szIbFlushGpuWrites before it publishes a slot.
bool szIbGpuDirectUsable(bool* needFlush);
// Makes remote writes into this GPU's memory visible to its kernels (the proxy's thread must
// have the device current).
void szIbFlushGpuWrites();

// A zeroed buffer of `bytes`, registered on every port with `access` (0: local reads only): in
// GPU memory when `gpu` and dma-buf registration works on every port, else pinned host memory.
// The first `registered` bytes only are registered (0: all). Errors: szUnhandledCudaError,
// szSystemError (a registration failed).
szResult_t szIbAlloc(const szIbVerbs* verbs, const std::vector<szIbPort>& ports, size_t bytes, size_t registered,
                     bool gpu, int access, szIbBuffer* buffer);
void szIbFree(const szIbVerbs* verbs, szIbBuffer* buffer);
