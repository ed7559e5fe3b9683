// Slot launches captured into CUDA graphs (docs/PIPELINE.md, "CUDA graphs"). A captured launch
// cannot use the slot path's rings of result slots, tables and scratch, which are handed to the
// next launches once it is reaped: a graph replays it any number of times, long after. So each
// captured launch gets its own memory, held by the graph through a CUDA user object and kept for
// the next capture once the graph and its instances are destroyed (freed with the communicator:
// freeing waits for every kernel of the device, which a peer's kernel waiting on this rank would
// hold up). Its steps need nothing from the host: the kernels take them from the channels' step
// words (src/proto/slot_steps.h).
// The communicator sees a replay's operations when it next reaps (any group call,
// szCommGetAsyncError, szCommGetStats): their results are read, counted like any operation's
// and re-armed. A failed replay fails the communicator as a failed launch does.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/slot_kernels.h"
#include "src/proto/slot_completion.h"

struct CUstream_st;

namespace sz {

class SlotGraphs {
 public:
  // A captured launch's memory: per operation a result (mapped pinned), a pool entry (mapped
  // pinned) and an accumulator (device, zero); the buffer-list tables (mapped pinned) and the
  // scratch (device), where it has any.
  struct Memory {
    SlotOpResult* results = nullptr;
    SlotOp* pool = nullptr;
    uint8_t* tables = nullptr;
    SlotOpAccum* accums = nullptr;
    uint8_t* scratch = nullptr;
    uint8_t* records = nullptr;  // FP16's and E4M3's escape records (device), where it has any
  };

  SlotGraphs() = default;
  // Frees every captured launch's memory: a graph still holding one must not be replayed after
  // its communicator is destroyed (as with NCCL).
  ~SlotGraphs();
  SlotGraphs(const SlotGraphs&) = delete;
  SlotGraphs& operator=(const SlotGraphs&) = delete;

  // Memory for a launch of `nops` operations being captured. Call with the thread's capture mode
  // relaxed (kernels/capture_mode.h). Errors: szUnhandledCudaError.
  szResult_t allocate(uint32_t nops, uint64_t tableBytes, uint64_t scratchBytes, uint64_t recordsBytes, Memory* out);
  // The launch allocated last was captured on `stream`: its graph now holds its memory, and its
  // operations report `ops` after each replay. Errors: szUnhandledCudaError (its memory is freed).
  szResult_t keep(CUstream_st* stream, std::vector<SlotCompletion> ops);
  // The launch allocated last was not kept: its memory is kept for a later capture, or, where
  // its kernel was captured (`launched`: a graph may still replay it), never used again.
  void drop(bool launched = false);
  // Each finished replay's operations (their results read, then re-armed), appended to
  // `finished`; memory of destroyed graphs kept for the next capture. Replays that finish
  // between two polls are reported once: the counts are those of the replays seen.
  void poll(std::vector<SlotCompletion>* finished);

 private:
  struct Entry {
    Memory mem;
    void* host = nullptr;  // the pinned block (results, pool, tables: kernels/pinned_host.h)
    void* dev = nullptr;   // the device block (accumulators, scratch)
    uint64_t hostBytes = 0, devBytes = 0;
    std::vector<SlotCompletion> ops;
    std::shared_ptr<std::atomic<bool>> released;  // set by the user object's destructor
  };
  static void free(Entry& e);
  void retire(std::unique_ptr<Entry> e);  // its graph is gone: kept for a later capture
  std::vector<std::unique_ptr<Entry>> entries_, spare_, abandoned_;
  std::unique_ptr<Entry> pending_;
};

}  // namespace sz
