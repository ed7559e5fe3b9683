// The device side of the pipeline: per-communicator CUDA resources (codec stream, encode temp
// memory, completion flags) and the slice work the progress thread issues on the codec stream.
// Stream semantics (NCCL's): a device operation touches the user's memory only once the ready
// event recorded on its stream at the call has completed (the progress thread polls it), and
// the user's later work waits (a stream wait on a completion flag) until the operation is
// complete: no host synchronization on the user's stream. The codec stream, shared by all the
// operations of the communicator, never waits on a user's stream: an operation of a later group
// is ready only once the earlier ones completed, and their codec work and completion flags are
// queued on the codec stream, so a codec-stream wait for it would deadlock them.
// Without CUDA every call returns szUnhandledCudaError.
#pragma once

#include <cstddef>
#include <cstdint>

#include "splitzip.h"

struct CUevent_st;

namespace sz {

struct DeviceContext;

// A non-blocking stream of the highest priority on the current device, for work the user's
// held stream waits for (the codec stream, the nccl wire's lanes; docs/PIPELINE.md).
szResult_t deviceCreateStream(cudaStream_t* stream);

// Creates the context on the calling thread's current device.
szResult_t deviceContextCreate(size_t maxSliceBytes, DeviceContext** ctx);
void deviceContextDestroy(DeviceContext* ctx);
// Makes the context's device current on the calling thread (the progress thread), in relaxed
// stream-capture mode.
szResult_t deviceMakeCurrent(DeviceContext* ctx);

// Slot payload memory: device memory, or pinned host memory the GPU can address (for wires
// that move host memory).
szResult_t deviceAlloc(bool pinnedHost, size_t bytes, void** p);
void deviceFree(bool pinnedHost, void* p);

// The user-stream half of an operation, made when szSend/szRecv is called.
struct DeviceOpSync {
  CUevent_st* ready = nullptr;  // recorded on the user's stream at the call
  int flag = -1;                // completion flag index
  uint32_t gen = 0;             // value that releases the user's stream
};
// At the call: records the ready event on the user's stream, then (after every operation of
// the group recorded its event) enqueues the wait that holds the user's later work.
szResult_t deviceOpRecordReady(DeviceContext* ctx, cudaStream_t user, DeviceOpSync* sync);
szResult_t deviceOpEnqueueWait(DeviceContext* ctx, cudaStream_t user, DeviceOpSync* sync);
// Progress thread: *ready once the user's earlier work is done; no slice of the operation
// starts before. A failed stream is an error, never "ready".
szResult_t deviceOpReady(const DeviceOpSync& sync, bool* ready);
// The CUDA device of the context.
int deviceOrdinal(const DeviceContext* ctx);
// Progress thread: releases the user's stream (also after a failure) and gives the event back.
void deviceOpComplete(DeviceContext* ctx, DeviceOpSync* sync);

// One piece of slice work on the codec stream.
struct DeviceTask {
  CUevent_st* done = nullptr;
  int slot = -1;  // mapped result slot (frame size or decode status)
  int kind = 0;
};
szResult_t deviceEncode(DeviceContext* ctx, const void* src, size_t count, szDataType_t type,
                        const szCodebook_t* codebook, void* frame, size_t capacity, DeviceTask* task);
// `headerCopy` (pinned host memory, or null): the frame's 96-byte header is copied there first,
// so the host can check the frame's count and type once the task has finished.
szResult_t deviceDecode(DeviceContext* ctx, const void* frame, size_t bytes, void* dst,
                        size_t capacity, uint8_t* headerCopy, DeviceTask* task);
szResult_t deviceCopy(DeviceContext* ctx, void* dst, const void* src, size_t bytes, DeviceTask* task);
// The most pieces one deviceCopyPieces takes.
constexpr size_t kDeviceCopyPieces = 8192;
// Copies pieces[i].bytes bytes from srcs[i] to dsts[i] for i < n (n <= kDeviceCopyPieces) in one
// launch, through the context's one pinned piece table: the task must have finished before
// the next call.
szResult_t deviceCopyPieces(DeviceContext* ctx, uint8_t* const* dsts, const uint8_t* const* srcs,
                            const uint64_t* bytes, size_t n, DeviceTask* task);
// True when the task has finished: *res its outcome, *bytes the frame size (encode).
bool deviceTaskPoll(DeviceContext* ctx, DeviceTask* task, szResult_t* res, uint64_t* bytes);

}  // namespace sz
