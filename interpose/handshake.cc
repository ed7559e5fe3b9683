// The interposer's handshake (handshake.h): the unique id's tag, the registrar and a rank's
// client.
#include "interpose/handshake.h"

#include <poll.h>

#include <cstring>
#include <thread>
#include <vector>

#include "base/auth.h"
#include "base/checks.h"

namespace szi {

namespace {

constexpr char kTagMagic[8] = {'S', 'Z', 'N', 'C', 'C', 'L', '0', '1'};
constexpr uint64_t kMsgMagic = 0x535a4e43434c4853ull;  // "SHLCCNZS"
constexpr int kConnectMs = 5000;  // the registrar listens before its id exists: refusals mean it is gone

struct WireTag {
  char magic[8];
  uint8_t key[kIdKeyBytes];
  szSocketAddress registrar;
};
static_assert(sizeof(WireTag) <= kIdBytes - kIdTagOffset, "the tag must fit in the id's tail");

struct Hello {
  uint64_t magic;
  uint8_t key[kIdKeyBytes];
  int32_t rank, nranks;
  uint64_t digest;
};
struct Ack {
  int32_t ok;
};
struct Done {
  int32_t ok;
};
struct Verdict {
  int32_t all;
};

// What the registrar has seen.
struct Tally {
  int nranks = 0;
  uint64_t digest = 0;
  std::vector<bool> seen;
  int registered = 0;
  bool agree = true;  // every registration had the same nranks and digest
  bool lost = false;  // a registered rank went away before its report
  bool decided = false;
  bool all = false;

  bool add(const Hello& h, const uint8_t* key) {
    if (h.magic != kMsgMagic || !szAuthEqual(h.key, key, kIdKeyBytes) || h.nranks < 1 || h.rank < 0 ||
        h.rank >= h.nranks || decided)
      return false;
    if (registered == 0) {
      nranks = h.nranks;
      digest = h.digest;
      seen.assign(size_t(nranks), false);
    }
    if (h.nranks != nranks || h.digest != digest) {
      agree = false;
      return true;  // a rank of other settings: registered, but the verdict will be "no"
    }
    if (seen[size_t(h.rank)]) return false;
    seen[size_t(h.rank)] = true;
    ++registered;
    return true;
  }
  bool report(bool ok) {
    if (!decided) {
      decided = true;
      all = ok && agree && !lost && registered == nranks;
    }
    return all;
  }
};

struct Client {
  int fd;
  bool registered = false;
};

void serve(int listenFd, IdTag tag) {
  Tally tally;
  std::vector<Client> clients;
  while (!(tally.decided && clients.empty())) {
    std::vector<pollfd> fds;
    if (!tally.decided) fds.push_back({listenFd, POLLIN, 0});
    for (const Client& c : clients) fds.push_back({c.fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), 1000) < 0) continue;
    size_t first = tally.decided ? 0 : 1;
    if (!tally.decided && (fds[0].revents & POLLIN)) {
      int fd = -1, exhausted = 0;
      if (szSocketAccept(listenFd, &fd, &exhausted) == szSuccess && fd >= 0) clients.push_back({fd});
    }
    std::vector<Client> kept;
    for (size_t i = 0; i < clients.size(); ++i) {
      Client c = clients[i];
      short ev = i + first < fds.size() && fds[i + first].fd == c.fd ? fds[i + first].revents : 0;
      bool keep = true;
      if (ev != 0) {
        szDeadline deadline = szDeadlineAfterMs(kConnectMs);
        if (!c.registered) {
          Hello h;
          Ack a{0};
          keep = szSocketRecvAll(c.fd, &h, sizeof(h), deadline) == szSuccess;
          if (keep) a.ok = tally.add(h, tag.key);
          keep = keep && a.ok && szSocketSendAll(c.fd, &a, sizeof(a), deadline) == szSuccess;
          c.registered = keep;
        } else {
          Done d;
          if (szSocketRecvAll(c.fd, &d, sizeof(d), deadline) == szSuccess) {
            Verdict v{tally.report(d.ok != 0)};
            szSocketSendAll(c.fd, &v, sizeof(v), deadline);
          } else if (!tally.decided) {
            tally.lost = true;  // its init will not be reported: no verdict can be "all"
          }
          keep = false;
        }
      }
      if (keep) kept.push_back(c);
      else szSocketClose(&c.fd);
    }
    clients.swap(kept);
  }
  szSocketClose(&listenFd);
}

}  // namespace

bool idTagFits(const char id[kIdBytes]) {
  for (size_t i = kIdTagOffset; i < kIdBytes; ++i)
    if (id[i] != 0) return false;
  return true;
}

bool idTagWrite(char id[kIdBytes], const IdTag& tag) {
  if (!idTagFits(id)) return false;
  WireTag w;
  memset(&w, 0, sizeof(w));
  memcpy(w.magic, kTagMagic, sizeof(kTagMagic));
  memcpy(w.key, tag.key, kIdKeyBytes);
  w.registrar = tag.registrar;
  memcpy(id + kIdTagOffset, &w, sizeof(w));
  return true;
}

bool idTagRead(const char id[kIdBytes], IdTag* tag) {
  WireTag w;
  memcpy(&w, id + kIdTagOffset, sizeof(w));
  if (memcmp(w.magic, kTagMagic, sizeof(kTagMagic)) != 0) return false;
  memcpy(tag->key, w.key, kIdKeyBytes);
  tag->registrar = w.registrar;
  return true;
}

szResult_t startRegistrar(IdTag* tag) {
  SZCHECK(szSocketLocalAddress(&tag->registrar));
  int fd = -1;
  SZCHECK(szSocketListen(&tag->registrar, &fd));
  szResult_t res = szAuthRandom(tag->key, kIdKeyBytes);
  if (res != szSuccess) {
    szSocketClose(&fd);
    return res;
  }
  std::thread(serve, fd, *tag).detach();
  return szSuccess;
}

szResult_t HandshakeClient::join(const IdTag& tag, int rank, int nranks, uint64_t digest, int timeoutMs,
                                 std::shared_ptr<HandshakeClient>* out) {
  std::shared_ptr<HandshakeClient> c(new HandshakeClient());
  c->timeoutMs_ = timeoutMs;
  SZCHECK(szSocketConnect(tag.registrar, szDeadlineAfterMs(kConnectMs), &c->fd_));
  Hello h;
  memset(&h, 0, sizeof(h));
  h.magic = kMsgMagic;
  memcpy(h.key, tag.key, kIdKeyBytes);
  h.rank = rank;
  h.nranks = nranks;
  h.digest = digest;
  szDeadline deadline = szDeadlineAfterMs(timeoutMs);
  SZCHECK(szSocketSendAll(c->fd_, &h, sizeof(h), deadline));
  Ack a{0};
  SZCHECK(szSocketRecvAll(c->fd_, &a, sizeof(a), deadline));
  if (!a.ok)
    return szSetError(szInvalidUsage, "interposer handshake: the registrar at %s refused rank %d of %d",
                      szSocketAddressString(tag.registrar).c_str(), rank, nranks);
  *out = std::move(c);
  return szSuccess;
}

szResult_t HandshakeClient::finish(bool initOk, bool* all) {
  *all = false;
  szDeadline deadline = szDeadlineAfterMs(timeoutMs_);
  Done d{initOk ? 1 : 0};
  SZCHECK(szSocketSendAll(fd_, &d, sizeof(d), deadline));
  Verdict v{0};
  SZCHECK(szSocketRecvAll(fd_, &v, sizeof(v), deadline));
  *all = v.all != 0;
  szSocketClose(&fd_);
  return szSuccess;
}

HandshakeClient::~HandshakeClient() { szSocketClose(&fd_); }

}  // namespace szi
