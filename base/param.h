// Environment parameters, NCCL param.h style: each knob has one definition, a default and a
// cached getter. SZ_PARAM(CpuThreads, "CPU_THREADS", 0) defines int64_t szParamCpuThreads()
// reading SZ_CPU_THREADS once. Values are numbers >= 0; sizes may end in K, M or G (binary);
// an invalid value is reported on stderr and the default used.
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
// Communicator defaults (szConfig_t fields left at 0/-1/NULL).
SZ_PARAM(SliceBytes, "SLICE_BYTES", 512 << 10)
SZ_PARAM(PipelineDepth, "PIPELINE_DEPTH", 4)
SZ_PARAM(TimeoutMs, "TIMEOUT_MS", 60000)
SZ_PARAM(Crc, "CRC", 0)
// SZ_CODEC_AUTO sends messages smaller than this raw: the codec cannot pay for its latency.
SZ_PARAM(AutoMinBytes, "AUTO_MIN_BYTES", 256 << 10)
// Slot protocol (device buffers): bytes per slice (one block encodes one slice into one slot),
// blocks per launch and slots per peer and direction (0: the wire's defaults, twice the blocks).
SZ_PARAM(SlotSliceBytes, "SLOT_SLICE_BYTES", 0)
SZ_PARAM(SlotBlocks, "SLOT_BLOCKS", 0)
SZ_PARAM(SlotCount, "SLOT_COUNT", 0)
// TCP connections per peer for the tcp wire; a message is striped over them.
SZ_PARAM(NSocks, "NSOCKS", 2)
// SO_SNDBUF/SO_RCVBUF of every TCP socket; 0 leaves the kernel's autotuning in charge.
SZ_PARAM(SocketBufBytes, "SOCKET_BUF_BYTES", 0)
// The ib wire (transport/ib_wire.cc): the GID index on RoCE ports (unset: a RoCE v2 one), the
// queue pairs' ACK timeout (4.096 us * 2^value) and retry count (as NCCL_IB_TIMEOUT and
// NCCL_IB_RETRY_CNT; they bound how long a vanished peer goes unnoticed), and 0 to keep the slot
// rings in pinned host memory even where GPUDirect RDMA works.
SZ_PARAM(IbGidIndex, "IB_GID_INDEX", -1)
SZ_PARAM(IbTimeout, "IB_TIMEOUT", 18)
SZ_PARAM(IbRetryCnt, "IB_RETRY_CNT", 7)
SZ_PARAM(IbGdr, "IB_GDR", 1)
// 0: pinned host memory (the proxied wires' slot rings) from cudaHostAlloc instead of the driver's
// virtual memory calls (kernels/pinned_host.h), for drivers whose host-NUMA cuMemCreate misbehaves.
SZ_PARAM(CumemHost, "CUMEM_HOST", 1)
