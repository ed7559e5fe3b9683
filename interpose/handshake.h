// The handshake that tells every rank of an NCCL communicator whether all its ranks run the
// interposer, with the same settings, before any of them makes a SplitZip communicator (a
// collective: one rank without the interposer would never join it, and its NCCL would read the
// unique id broadcast of szCommInitFromNccl as the program's first collective).
//
// The channel must not be the NCCL communicator: a plain peer would not take part. It is a TCP
// side channel named in the unique id itself. The interposed ncclGetUniqueId starts a
// registrar (a thread of that process) and writes its address and a random key into the id's
// last 64 bytes, which NCCL leaves zero and never reads (its bootstrap handle is a magic and a
// socket address, 36 bytes). Every interposed rank then:
//   1. registers (rank, nranks, settings digest) and waits for the registrar's acknowledgement,
//   2. calls the real ncclCommInitRank*, which returns only once every rank has called it,
//   3. reports that init's result and receives the verdict.
// The registrar decides at the first report: by then every rank is inside NCCL's init, so every
// interposed rank has registered (step 1 ends before step 2 begins). The verdict is "all" when
// all nranks registered with one digest and that init succeeded; every rank gets the same one.
// A rank without the interposer never registers (verdict "no"); an id from a process without
// it has no tag (no handshake, no SplitZip). Failures of the side channel give "no" too.
#pragma once

#include <cstdint>
#include <memory>

#include "base/socket.h"
#include "splitzip.h"

namespace szi {

constexpr size_t kIdBytes = 128;        // NCCL_UNIQUE_ID_BYTES
constexpr size_t kIdTagOffset = 64;     // the tag's place in the id
constexpr size_t kIdKeyBytes = 16;

struct IdTag {
  szSocketAddress registrar;
  uint8_t key[kIdKeyBytes];
};

// Whether the id's tail is free (all zero) for a tag.
bool idTagFits(const char id[kIdBytes]);
// Writes `tag` into the id's tail; false (id unchanged) when the tail is not free.
bool idTagWrite(char id[kIdBytes], const IdTag& tag);
// Reads the tag; false when the id carries none.
bool idTagRead(const char id[kIdBytes], IdTag* tag);

// Starts a registrar that serves one communicator's handshake on a thread of its own (it ends
// once every registered rank has its verdict) and fills `tag` with its address and key.
// Errors: szSystemError (no address, cannot listen).
szResult_t startRegistrar(IdTag* tag);

// One rank's side of the handshake.
class HandshakeClient {
 public:
  // Step 1: registers with the registrar of `tag` and waits for its acknowledgement (a refused
  // registration, bad tag or duplicate rank, is an error).
  // Errors: szSystemError, szRemoteError, szTimeout (timeoutMs), szInvalidUsage (refused).
  static szResult_t join(const IdTag& tag, int rank, int nranks, uint64_t digest, int timeoutMs,
                         std::shared_ptr<HandshakeClient>* out);
  // Step 3: reports whether this rank's NCCL init succeeded; *all receives the verdict.
  szResult_t finish(bool initOk, bool* all);
  ~HandshakeClient();
  HandshakeClient(const HandshakeClient&) = delete;
  HandshakeClient& operator=(const HandshakeClient&) = delete;

 private:
  HandshakeClient() = default;
  int fd_ = -1;
  int timeoutMs_ = 0;
};

}  // namespace szi
