// The NCCL communicators the interposer has made SplitZip communicators for, each with its
// counters. A communicator that is not here is forwarded whole. Entries are shared, so a call
// that found one keeps it alive while another thread destroys the communicator.
//
// NCCL lets other threads query or abort a communicator while one issues operations on it
// (PyTorch's watchdog polls ncclCommGetAsyncError); a SplitZip communicator takes one call at a
// time, so every SplitZip call that touches one holds its entry's mutex (the error queries only
// try it: a busy communicator reports no SplitZip error yet, and the watchdog asks again).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "splitzip.h"

namespace szi {

struct Entry {
  void* nccl = nullptr;  // ncclComm_t
  szComm_t sz = nullptr;
  int rank = 0, nranks = 0;
  std::atomic<uint64_t> sends{0}, recvs{0};                    // intercepted
  std::atomic<uint64_t> forwardedSends{0}, forwardedRecvs{0};  // forwarded (type, size, ...)
  std::atomic<bool> firstLogged{false};
  std::mutex mu;  // held around every SplitZip call on `sz`
};

void registryAdd(std::shared_ptr<Entry> e);
std::shared_ptr<Entry> registryFind(const void* nccl);
// Removes the entry (null when there is none); the caller tears its SplitZip side down.
std::shared_ptr<Entry> registryTake(const void* nccl);

// Reports an entry's counters and SplitZip's stats (szCommGetStats): an INFO line, and with
// SZ_INTERPOSE_STATS=path one JSON line appended to that file. Once per entry: at its
// communicator's finalize, destroy or abort, or at process exit for those still open. Takes
// the entry's mutex.
void reportStats(Entry& e, const char* when);

}  // namespace szi
