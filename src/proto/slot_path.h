// The host side of the slot protocol (docs/PIPELINE.md, "Slot protocol"): turns a group's
// device operations of one communicator, their streams joined, into one slot-kernel launch
// (kernels/slot_kernels.h) and collects what the kernels report. It gives each operation its
// step offset from the channel's device step word (slot_steps.h: operations to one peer are
// matched in call order on both sides, as in NCCL), its blocks, result slot and buffer-list
// table, and records an event behind each launch that is not captured into a CUDA graph
// (slot_graphs.h). No thread of its own: the kernels move the data; launches are reaped when the
// communicator is asked (szCommGetAsyncError, the next group, szCommFinalize, szCommGetStats,
// destroy).
#pragma once

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "kernels/escape_slots.h"
#include "kernels/slot_kernels.h"
#include "src/proto/op.h"
#include "src/proto/peer_channels.h"
#include "src/proto/slot_completion.h"
#include "src/proto/slot_graphs.h"

struct CUevent_st;
struct CUstream_st;

namespace sz {

// Elements at the start of a group's data that a calibration's histogram covers.
constexpr uint64_t kCalibrateElems = uint64_t(1) << 22;

struct SlotPathConfig {
  uint64_t sliceBytes;  // the largest slice of any channel (the scratch buffers' stride)
  uint32_t nslots;
  uint32_t blocks;  // blocks per launch (split among its operations)
  int timeoutMs;
};

class SlotPath {
 public:
  // The pools; each peer's channels come from `channel` at the first operations with it (connect).
  // `sliceBytes` per rank: its channels' slice payload bytes, 0 where this rank has none with it.
  static szResult_t create(const ChannelSource& channel, int rank, std::vector<uint64_t> sliceBytes,
                           const SlotPathConfig& config, std::unique_ptr<SlotPath>* out);
  ~SlotPath();  // waits for the launches in flight (bounded by the kernels' timeout)
  SlotPath(const SlotPath&) = delete;
  SlotPath& operator=(const SlotPath&) = delete;

  // The slice size of an operation of `bytes` bytes with `peer`, from its channel's slices (both
  // sides of a pair cut alike: slot_format.h).
  uint64_t opSliceBytes(int peer, uint64_t bytes) const {
    return sz::opSliceBytes(bytes, channels_.sliceBytes(peer));
  }
  // Whether this rank has device channels with `peer` (none where one of the two has no GPU).
  bool reaches(int peer) const { return channels_.reaches(peer); }
  bool connected(int peer) const { return channels_.connected(peer); }
  // Connects the channels with those of `peers` not connected yet (PeerChannels::connect): every
  // peer of a group at once, before its launches. May wait for those peers to connect too.
  szResult_t connect(const std::vector<int>& peers) { return channels_.connect(peers); }
  // One launch running `reqs` together (at most kMaxSlotOps, in call order), their peers
  // connected. It runs on the first operation's stream; the others' streams join it as NCCL's
  // group launches do (the launch waits for their work so far, their later work waits for the
  // launch), so operations of one channel take their steps in call order whatever their streams.
  // A launch also waits for the launch in flight before it on each of its channels when that ran
  // on another stream: the channels' step words are advanced on the device, in launch order.
  // captured: the operations' streams are being captured into a CUDA graph (src/proto/slot_graphs.h);
  // the launch is recorded, not run, and its sends carry no calibration. A captured launch is
  // ordered only by its streams: replays and other operations on its channels must be ordered
  // by the caller (one stream, or events), as NCCL asks of its graph users.
  szResult_t enqueue(const std::vector<Op>& reqs, bool captured = false);
  // Collects finished launches, calling `done` for each of their operations (also those that
  // finished while enqueue waited for pools); returns the first failure among them. query =
  // false: only launches whose results are all written, with no CUDA call (a launch that failed
  // without writing them, a crash, fails the next launch or the next reap that queries).
  szResult_t reap(const std::function<void(const SlotCompletion&)>& done, bool query = true);
  bool idle() const { return inflight_.empty() && finished_.empty(); }
  // Bytes of one launch's scratch: a slice per block.
  uint64_t scratchBytes() const { return cfg_.sliceBytes * std::max<uint64_t>(cfg_.blocks, kMaxSlotOps); }
  // A block's escape records of an FP16 or E4M3 slice (kernels/escape_slots.h), and a launch's.
  uint64_t recordsStride() const { return narrowScratchBytes(cfg_.sliceBytes); }
  uint64_t recordsBytes() const { return recordsStride() * std::max<uint64_t>(cfg_.blocks, kMaxSlotOps); }

 private:
  struct Calibration {
    size_t op, entry;  // the operation, and the group's place in its request's codebooks
    int buf;           // the calibration buffer
  };
  struct Launch {
    CUevent_st* event;
    CUstream_st* stream;  // launches of one stream finish in order (collect)
    std::vector<int> results;  // result slots, in request order
    std::vector<SlotCompletion> ops;
    std::vector<Calibration> calib;
    uint64_t tableBegin, tableEnd;  // range of the pinned table arena
    int scratch;                    // scratch arena or -1
    int records;                    // records arena or -1
    uint64_t seq;                   // launches in enqueue order, from 1
#if SZ_PROFILE
    std::vector<uint32_t> blocks;  // each operation's blocks (base/profile.h: phases per block)
#endif
  };
#if SZ_PROFILE
  std::map<CUstream_st*, uint64_t> lastDoneNs_;  // per stream, its last reaped launch's done stamp
#endif
  SlotPath() = default;
  Launch takeLaunch();
  szResult_t takeTable(uint64_t bytes, uint64_t* offset);
  bool resultsWritten(const Launch& l) const;
  szResult_t finish(Launch& l);
  szResult_t collect(bool query = true);
  szResult_t waitOldest();
  szResult_t calibrate(const Op& r, int group, int buf, cudaStream_t stream);
  szResult_t orderOnDevice(const std::vector<Op>& reqs, const std::vector<int>& chan, cudaStream_t stream);
  szResult_t joinAfter(const std::vector<Op>& reqs, cudaStream_t stream, CUevent_st* after = nullptr);
  bool inFlight(uint64_t seq) const;

  int rank_ = 0, nranks_ = 0;
  SlotPathConfig cfg_{};
  PeerChannels channels_;
  SlotOpAccum* accums_ = nullptr;             // device memory, one per result slot
  SlotOpResult* results_ = nullptr;           // mapped pinned memory
  std::vector<int> freeResults_;
  uint8_t* table_ = nullptr;  // pinned: buffer-list tables of launches in flight (a ring)
  uint64_t tableHead_ = 0;
  SlotOp* opPool_ = nullptr;  // pinned: an operation per result slot, for those past a launch's parameters
  // Device arenas of one size that launches take and give back once reaped (index -1: none).
  struct Arenas {
    std::vector<uint8_t*> all;
    std::vector<int> free;
    void add(uint8_t* arena) {
      all.push_back(arena);
      free.push_back(int(all.size()) - 1);
    }
    int take() {
      const int i = free.back();
      free.pop_back();
      return i;
    }
    void give(int i) {
      if (i >= 0) free.push_back(i);
    }
  };
  Arenas scratch_;  // kScratchArenas: launches with compressed buffer lists
  // Escape-record arenas of launches with FP16 or E4M3 sends, made as launches need them (up to
  // kEvents, one per launch in flight): a host thread never waits for its own sends to be received.
  Arenas records_;
  std::vector<CUevent_st*> freeEvents_, allEvents_;
  std::deque<Launch> inflight_;
  std::vector<SlotCompletion> finished_;   // collected, not yet handed to reap's caller
  std::vector<SlotCompletion> ready_;      // reap's: handed to its caller
  std::vector<Launch> spare_;              // reaped launches, their vectors' room kept for the next
  struct Plan {                            // enqueue's per-operation figures, reused
    std::vector<uint64_t> slices, sliceBytes, stepOffset, stepAdvance;
    std::vector<int> chan;
  } plan_;
  std::vector<CUstream_st*> running_;      // collect's streams whose oldest launch is running
  uint64_t* steps_ = nullptr;  // device: each channel's next step (slot_steps.h: stepChannel)
  // Per channel, the last launch that used it (seq 0: none), for ordering the next one after it.
  struct ChannelLast {
    CUstream_st* stream;
    CUevent_st* event;
    uint64_t seq;
  };
  std::vector<ChannelLast> last_;
  uint64_t seq_ = 0;
  CUevent_st* joinEvent_ = nullptr;  // a joined stream's work so far (re-recorded per join)
  SlotGraphs graphs_;  // captured launches' memory
  unsigned long long* calibDev_ = nullptr;   // device: 256 counters per calibration buffer
  unsigned long long* calibHost_ = nullptr;  // pinned: their copies, read when the launch is reaped
  std::vector<int> freeCalib_;
};

}  // namespace sz
