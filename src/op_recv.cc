// The receive side of the host slice pipeline (pipeline.h): an operation's header is checked
// against the receive, its slices' receives are posted in order into free slots, each arrived
// slice is checked (header, CRC32C) and decoded on a CPU codec task, and the acknowledgement
// goes back once every slice is in place.
#include <cstring>

#include "codec/checksum.h"
#include "base/checks.h"
#include "base/debug.h"
#include "src/op_runner.h"

namespace sz {

szResult_t OpRunner::postRecv(Slot& s, uint64_t slice) {
  const szWire* w = comm_->wire;
  uint64_t bytes = sliceBytes(slice);
  size_t cap = bytes;
  if (frames_) SZCHECK(szEncodeMaxSize(bytes / elemBytes_, op_->type, &cap));
  uint8_t* direct = directRaw() ? contiguous(sliceOffset(slice), bytes) : nullptr;
  SZCHECK(ensureSlot(s, direct == nullptr));
  uint8_t* dst = direct ? direct : s.frame;
  s.slice = int64_t(slice);
  SZCHECK(w->irecv(comm_->wireComm, op_->peer, &s.hdr, sizeof(s.hdr), nullptr, &s.hdrReq.req));
  return w->irecv(comm_->wireComm, op_->peer, dst, cap, nullptr, &s.payReq.req);
}

// Both messages of a slice arrived: check them and start its decode (or copy).
szResult_t OpRunner::receivedSlice(Slot& s) {
  uint64_t slice = uint64_t(s.slice), off = sliceOffset(slice), bytes = sliceBytes(slice);
  uint64_t got = s.payReq.bytes;
  TRACE(SZ_P2P, "rank %d: recv from rank %d seq %u: slice %llu arrived, %llu bytes", comm_->rank, op_->peer, seq_,
        (unsigned long long)slice, (unsigned long long)got);
  if (!frames_ && got != bytes)
    return szSetError(szCorruptFrame, "rank %d: raw slice %llu from rank %d has %llu bytes, expected %llu",
                      comm_->rank, (unsigned long long)slice, op_->peer, (unsigned long long)got,
                      (unsigned long long)bytes);
  {
    std::lock_guard<std::mutex> lock(comm_->statsMu);
    comm_->stats.recvRawBytes += bytes;
    comm_->stats.recvWireBytes += sizeof(SliceHeader) + got;
    comm_->stats.recvSlices++;
  }
  uint8_t* direct = contiguous(off, bytes);
  const uint8_t* payload = directRaw() && direct ? direct : s.frame;
  const SliceHeader& h = s.hdr;
  if (s.hdrReq.bytes != sizeof(SliceHeader) || h.magic != kSliceMagic || h.seq != seq_ || h.slice != slice ||
      h.payloadBytes != got)
    return szSetError(szCorruptFrame, "rank %d: slice %llu from rank %d has a bad header", comm_->rank,
                      (unsigned long long)slice, op_->peer);
  if (desc_.crc && crc32c(payload, got) != h.crc)
    return szSetError(szCorruptFrame, "rank %d: slice %llu from rank %d fails its CRC32C", comm_->rank,
                      (unsigned long long)slice, op_->peer);
  if (directRaw() && direct != nullptr) {  // already in place
    s.ready = true;
    return szSuccess;
  }
  if (!frames_) {
    copySlice(off, bytes, s.frame, false);
    s.ready = true;
    return szSuccess;
  }
  uint8_t* dst = direct;
  if (dst == nullptr) {
    s.staging.resize(bytes);
    dst = s.staging.data();
  }
  szComm* comm = comm_;
  const uint8_t* frame = s.frame;
  s.hostRunning = true;
  szDataType_t type = op_->type;
  uint64_t expect = bytes / elemBytes_;
  int peer = op_->peer;
  s.hostTask = runTask([comm, frame, got, dst, bytes, type, expect, peer]() {
    auto t0 = Clock::now();
    size_t count = 0;
    szDataType_t gotType = type;
    szResult_t r = szDecode(frame, got, dst, bytes, &count, &gotType);
    if (r == szSuccess && (count != expect || gotType != type))
      r = szSetError(szCorruptFrame, "rank %d: a frame from rank %d holds %zu elements of %s, expected %llu "
                     "of %s", comm->rank, peer, count, szTypeName(gotType), (unsigned long long)expect, szTypeName(type));
    std::lock_guard<std::mutex> lock(comm->statsMu);
    comm->stats.decodeSeconds += seconds(t0, Clock::now());
    return r;
  });
  return szSuccess;
}

bool OpRunner::stepRecv() {
  bool moved = false;
  if (!started_) {
    started_ = true;
    if (failed(comm_->desc->irecv(comm_->descComm, op_->peer, &desc_, sizeof(desc_), nullptr, &descReq_.req)))
      return true;
    moved = true;
  }
  if (failed(descReq_.poll(comm_->desc, &moved))) return true;
  if (!descReq_.done) return moved;
  if (!descDone_) {
    descDone_ = true;
    // Checked with the sender's element size: a type mismatch is the user's, reported below.
    size_t senderElem = descReq_.bytes == sizeof(desc_) && desc_.type < szNumTypes ? szTypeSize(szDataType_t(desc_.type)) : 0;
    bool valid = senderElem > 0 && desc_.magic == kOpMagic && desc_.version == kProtocolVersion &&
                 desc_.seq == seq_ && desc_.mode <= 1 && desc_.sliceElems > 0 &&
                 desc_.sliceElems <= comm_->cfg.sliceBytes / senderElem &&
                 desc_.numSlices == desc_.count / desc_.sliceElems + (desc_.count % desc_.sliceElems != 0);
    if (!valid) {  // the sender learns it from the acknowledgement instead of waiting for one
      status_ = szSetError(szCorruptFrame, "rank %d: bad operation header from rank %d", comm_->rank, op_->peer);
    } else if (desc_.count != op_->count || desc_.type != uint32_t(op_->type)) {
      status_ = szSetError(szInvalidUsage, "rank %d: %s of %llu elements of %s from rank %d does not "
                           "match its send of %llu elements of %s", comm_->rank, op_->api,
                           (unsigned long long)op_->count, szTypeName(op_->type), op_->peer,
                           (unsigned long long)desc_.count, szTypeName(int(desc_.type)));
    }
    ack_ = OpAck{kAckMagic, seq_, int32_t(status_), int32_t(op_->type), op_->count};
    frames_ = desc_.mode == 1;
    sliceElems_ = desc_.sliceElems;
    numSlices_ = desc_.numSlices;
    TRACE(SZ_P2P, "rank %d: recv from rank %d seq %u: %llu elements of type %d, %llu slices, %s, status %d",
          comm_->rank, op_->peer, seq_, (unsigned long long)op_->count, (int)op_->type,
          (unsigned long long)numSlices_, frames_ ? "frames" : "raw", (int)status_);
    moved = true;
  }
  if (status_ == szSuccess) {
    for (Slot& s : slots_) {
      if (failed(s.hdrReq.poll(comm_->wire, &moved)) || failed(s.payReq.poll(comm_->wire, &moved))) return true;
      if (s.slice >= 0 && s.hdrReq.done && s.payReq.done && !s.hostRunning && !s.ready) {
        if (failed(receivedSlice(s))) return true;
        moved = true;
      }
      bool taskDone = false;
      if (failed(pollTask(s, &taskDone))) return true;
      if (taskDone) {
        uint64_t off = sliceOffset(uint64_t(s.slice)), bytes = sliceBytes(uint64_t(s.slice));
        if (frames_ && contiguous(off, bytes) == nullptr) copySlice(off, bytes, s.staging.data(), false);
        s.ready = true;
      }
      if (s.slice >= 0 && s.ready) {
        s.slice = -1;
        s.ready = false;
        s.hdrReq.reset();
        s.payReq.reset();
        ++completed_;
        moved = true;
      }
    }
    // Receives are posted in slice order, into free slots.
    while (nextPost_ < numSlices_) {
      Slot* free = nullptr;
      for (Slot& s : slots_)
        if (s.slice < 0 && free == nullptr) free = &s;
      if (free == nullptr) break;
      if (failed(postRecv(*free, nextPost_))) return true;
      ++nextPost_;
      moved = true;
    }
    if (nextPost_ == numSlices_) allPosted_ = true;
  } else {
    allPosted_ = true;  // mismatch: nothing is received; the data channel is now out of step
  }
  if ((completed_ == numSlices_ || status_ != szSuccess) && !ackPosted_ && pipe_->nextAck(op_->peer) == seq_) {
    ++pipe_->nextAck(op_->peer);
    if (failed(comm_->ack->isend(comm_->ackComm, op_->peer, &ack_, sizeof(ack_), nullptr, &ackReq_.req))) return true;
    ackPosted_ = true;
    moved = true;
  }
  if (ackPosted_) {
    if (failed(ackReq_.poll(comm_->ack, &moved))) return true;
    if (ackReq_.done) finish(status_);
  }
  return moved;
}

}  // namespace sz
