// The interposer's communicator registry and its stats report (registry.h).
#include "interpose/registry.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "base/debug.h"

namespace szi {

namespace {

std::mutex gMu;
std::unordered_map<const void*, std::shared_ptr<Entry>>& table() {
  static auto* t = new std::unordered_map<const void*, std::shared_ptr<Entry>>();  // outlives exit handlers
  return *t;
}

// Communicators the program never tore down still report, at exit.
void reportAtExit() {
  std::vector<std::shared_ptr<Entry>> left;
  {
    std::lock_guard<std::mutex> lock(gMu);
    for (auto& kv : table()) left.push_back(kv.second);
  }
  for (auto& e : left) reportStats(*e, "exit");
}

}  // namespace

void registryAdd(std::shared_ptr<Entry> e) {
  static std::once_flag once;
  std::call_once(once, [] { atexit(reportAtExit); });
  std::lock_guard<std::mutex> lock(gMu);
  table()[e->nccl] = std::move(e);
}

std::shared_ptr<Entry> registryFind(const void* nccl) {
  std::lock_guard<std::mutex> lock(gMu);
  auto it = table().find(nccl);
  return it == table().end() ? nullptr : it->second;
}

std::shared_ptr<Entry> registryTake(const void* nccl) {
  std::lock_guard<std::mutex> lock(gMu);
  auto it = table().find(nccl);
  if (it == table().end()) return nullptr;
  std::shared_ptr<Entry> e = std::move(it->second);
  table().erase(it);
  return e;
}

void reportStats(Entry& e, const char* when) {
  szStats_t s{};
  {
    std::lock_guard<std::mutex> lock(e.mu);
    if (szCommGetStats(e.sz, &s) != szSuccess) return;
  }
  unsigned long long sends = e.sends, recvs = e.recvs, fs = e.forwardedSends, fr = e.forwardedRecvs;
  INFO(SZ_P2P, "SplitZip interposer: rank %d/%d at %s: %llu sends and %llu receives through SplitZip "
       "(%llu -> %llu bytes sent, %llu <- %llu bytes received), %llu sends and %llu receives forwarded",
       e.rank, e.nranks, when, sends, recvs, (unsigned long long)s.rawBytes, (unsigned long long)s.wireBytes,
       (unsigned long long)s.recvRawBytes, (unsigned long long)s.recvWireBytes, fs, fr);
  const char* path = getenv("SZ_INTERPOSE_STATS");
  if (path == nullptr || *path == '\0') return;
  FILE* f = fopen(path, "a");
  if (f == nullptr) {
    WARN("SplitZip interposer: cannot open SZ_INTERPOSE_STATS=%s", path);
    return;
  }
  fprintf(f, "{\"pid\": %d, \"rank\": %d, \"nranks\": %d, \"when\": \"%s\", \"sends\": %llu, \"recvs\": %llu, "
          "\"forwardedSends\": %llu, \"forwardedRecvs\": %llu, \"rawBytes\": %llu, \"wireBytes\": %llu, "
          "\"recvRawBytes\": %llu, \"recvWireBytes\": %llu}\n",
          (int)getpid(), e.rank, e.nranks, when, sends, recvs, fs, fr, (unsigned long long)s.rawBytes,
          (unsigned long long)s.wireBytes, (unsigned long long)s.recvRawBytes, (unsigned long long)s.recvWireBytes);
  fclose(f);
}

}  // namespace szi
