// TCP helpers: see socket.h for the error conventions.
#include "base/socket.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "base/checks.h"
#include "base/param.h"

namespace {

socklen_t addressLength(const szSocketAddress& addr) {
  return addr.sa.sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

// Errors that mean the peer is gone rather than that this host failed.
bool peerGone(int err) { return err == ECONNRESET || err == EPIPE || err == ENOTCONN; }

}  // namespace

szResult_t szSocketIoError(const char* op, int err) {
  if (peerGone(err))
    return szSetError(szRemoteError, "socket %s: connection reset by peer (%s)", op, strerror(err));
  return szSetError(szSystemError, "socket %s: %s", op, strerror(err));
}

namespace {

void tune(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
    INFO(SZ_NET, "setsockopt TCP_NODELAY: %s", strerror(errno));
  // An explicit size turns off Linux buffer autotuning and is capped by net.core.[rw]mem_max,
  // so it is only set when asked for.
  int buf = (int)std::min<int64_t>(szParamSocketBufBytes(), INT_MAX);
  if (buf > 0) {
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf)) != 0)
      INFO(SZ_NET, "setsockopt SO_SNDBUF/SO_RCVBUF %d: %s", buf, strerror(errno));
  }
}

szResult_t newSocket(int family, int* fd) {
  *fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (*fd < 0) return szSetError(szSystemError, "socket: %s", strerror(errno));
  return szSuccess;
}

// Waits until `fd` is ready for `events`. POLLERR/POLLHUP count as ready: the next I/O call
// reports what happened.
szResult_t waitFor(int fd, short events, szDeadline deadline, const char* op) {
  for (;;) {
    pollfd p = {fd, events, 0};
    int n = poll(&p, 1, szPollTimeoutMs(deadline));
    if (n > 0) return szSuccess;
    if (n < 0 && errno != EINTR) return szSetError(szSystemError, "poll (%s): %s", op, strerror(errno));
    if (n == 0 && szClock::now() >= deadline)
      return szSetError(szTimeout, "socket %s: timed out", op);
  }
}

// One non-blocking connect attempt: szSuccess, or the errno that made it fail in *err.
szResult_t connectOnce(const szSocketAddress& addr, szDeadline deadline, int* fd, int* err) {
  SZCHECK(newSocket(addr.sa.sa_family, fd));
  *err = 0;
  if (connect(*fd, &addr.sa, addressLength(addr)) != 0) {
    if (errno != EINPROGRESS) {
      *err = errno;
    } else {
      szResult_t res = waitFor(*fd, POLLOUT, deadline, "connect");
      if (res != szSuccess) {
        szSocketClose(fd);
        return res;
      }
      socklen_t len = sizeof(*err);
      if (getsockopt(*fd, SOL_SOCKET, SO_ERROR, err, &len) != 0) *err = errno;
    }
  }
  if (*err != 0) szSocketClose(fd);
  return szSuccess;
}

}  // namespace

szDeadline szDeadlineAfterMs(int64_t ms) { return szClock::now() + std::chrono::milliseconds(ms); }

int szPollTimeoutMs(szDeadline deadline) {
  auto left = deadline - szClock::now();
  if (left <= szClock::duration::zero()) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return (int)std::min<int64_t>(ms, INT_MAX);
}

void szSocketClose(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

std::string szSocketAddressString(const szSocketAddress& addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (addr.sa.sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &addr.sin6.sin6_addr, host, sizeof(host));
    return "[" + std::string(host) + "]:" + std::to_string(ntohs(addr.sin6.sin6_port));
  }
  inet_ntop(AF_INET, &addr.sin.sin_addr, host, sizeof(host));
  return std::string(host) + ":" + std::to_string(ntohs(addr.sin.sin_port));
}

szResult_t szSocketParseAddress(const char* hostPort, szSocketAddress* addr) {
  if (hostPort == nullptr || addr == nullptr)
    return szSetError(szInvalidArgument, "address: NULL argument");
  std::string s(hostPort), host, port;
  if (!s.empty() && s[0] == '[') {
    size_t close = s.find(']');
    if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':')
      return szSetError(szInvalidArgument, "address '%s': expected [ipv6]:port", hostPort);
    host = s.substr(1, close - 1);
    port = s.substr(close + 2);
  } else {
    size_t colon = s.rfind(':');
    if (colon == std::string::npos || s.find(':') != colon)
      return szSetError(szInvalidArgument, "address '%s': expected host:port or [ipv6]:port",
                        hostPort);
    host = s.substr(0, colon);
    port = s.substr(colon + 1);
  }
  char* end = nullptr;
  long p = strtol(port.c_str(), &end, 10);
  if (host.empty() || port.empty() || *end != '\0' || p < 1 || p > 65535)
    return szSetError(szInvalidArgument, "address '%s': needs a host and a port in 1..65535",
                      hostPort);
  addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &list);
  if (rc != 0 || list == nullptr)
    return szSetError(szInvalidArgument, "address '%s': cannot resolve '%s': %s", hostPort,
                      host.c_str(), gai_strerror(rc));
  memset(addr, 0, sizeof(*addr));
  memcpy(addr, list->ai_addr, std::min<size_t>(list->ai_addrlen, sizeof(*addr)));
  freeaddrinfo(list);
  return szSuccess;
}

namespace {

// The interface of `list` holding the local address the kernel would send to `dest` from (a
// connected UDP socket sends nothing); null if there is no route.
const ifaddrs* interfaceToward(const ifaddrs* list, const szSocketAddress& dest) {
  int fd = socket(dest.sa.sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  szSocketAddress local;
  socklen_t len = sizeof(local);
  bool ok = connect(fd, &dest.sa, addressLength(dest)) == 0 && getsockname(fd, &local.sa, &len) == 0;
  close(fd);
  if (!ok) return nullptr;
  for (const ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || !(ifa->ifa_flags & IFF_UP) || ifa->ifa_addr->sa_family != local.sa.sa_family)
      continue;
    const auto* a = reinterpret_cast<const szSocketAddress*>(ifa->ifa_addr);
    if (local.sa.sa_family == AF_INET ? a->sin.sin_addr.s_addr == local.sin.sin_addr.s_addr
                                      : memcmp(&a->sin6.sin6_addr, &local.sin6.sin6_addr, sizeof(in6_addr)) == 0)
      return ifa;
  }
  return nullptr;
}

}  // namespace

szResult_t szSocketLocalAddress(szSocketAddress* addr) {
  memset(addr, 0, sizeof(*addr));
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return szSetError(szSystemError, "getifaddrs: %s", strerror(errno));
  const char* want = getenv("SZ_SOCKET_IFNAME");
  const ifaddrs* pick = nullptr;
  auto usable = [](const ifaddrs* ifa) {
    return ifa->ifa_addr != nullptr && (ifa->ifa_flags & IFF_UP) &&
           (ifa->ifa_addr->sa_family == AF_INET || ifa->ifa_addr->sa_family == AF_INET6);
  };
  if (want != nullptr && *want != '\0') {
    for (const ifaddrs* ifa = list; ifa != nullptr && pick == nullptr; ifa = ifa->ifa_next)
      if (usable(ifa) && strncmp(ifa->ifa_name, want, strlen(want)) == 0) pick = ifa;
    if (pick == nullptr) {  // as NCCL_SOCKET_IFNAME: a name that matches nothing is an error
      freeifaddrs(list);
      return szSetError(szInvalidArgument, "SZ_SOCKET_IFNAME=%s: no interface of that name (prefix) is up", want);
    }
  }
  // As NCCL does with NCCL_COMM_ID: the interface the route to SZ_COMM_ID leaves by, so that
  // SZ_COMM_ID=127.0.0.1:port keeps every rank on loopback.
  szSocketAddress toward;
  const char* commId = getenv("SZ_COMM_ID");
  if (pick == nullptr && commId != nullptr && *commId != '\0' && szSocketParseAddress(commId, &toward) == szSuccess)
    pick = interfaceToward(list, toward);
  for (const ifaddrs* ifa = list; ifa != nullptr && pick == nullptr; ifa = ifa->ifa_next)
    if (usable(ifa) && ifa->ifa_addr->sa_family == AF_INET && !(ifa->ifa_flags & IFF_LOOPBACK))
      pick = ifa;
  if (pick != nullptr) {
    memcpy(addr, pick->ifa_addr,
           pick->ifa_addr->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in));
    INFO(SZ_NET | SZ_INIT, "using interface %s address %s", pick->ifa_name,
         szSocketAddressString(*addr).c_str());
  } else {
    addr->sin.sin_family = AF_INET;
    addr->sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    INFO(SZ_NET | SZ_INIT, "no non-loopback IPv4 interface: using 127.0.0.1");
  }
  freeifaddrs(list);
  if (addr->sa.sa_family == AF_INET6) addr->sin6.sin6_port = 0;
  else addr->sin.sin_port = 0;
  return szSuccess;
}

szResult_t szSocketListen(szSocketAddress* addr, int* fd) {
  SZCHECK(newSocket(addr->sa.sa_family, fd));
  // Lets a fixed SZ_COMM_ID port be reused while connections of an earlier run sit in TIME_WAIT.
  int one = 1;
  setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  socklen_t len = addressLength(*addr);
  if (bind(*fd, &addr->sa, len) != 0 || listen(*fd, SOMAXCONN) != 0 ||
      getsockname(*fd, &addr->sa, &len) != 0) {
    int err = errno;
    szSocketClose(fd);
    return szSetError(szSystemError, "listen on %s: %s", szSocketAddressString(*addr).c_str(),
                      strerror(err));
  }
  INFO(SZ_NET, "listening on %s", szSocketAddressString(*addr).c_str());
  return szSuccess;
}

szResult_t szSocketConnect(const szSocketAddress& addr, szDeadline deadline, int* fd) {
  auto backoff = std::chrono::milliseconds(1);
  for (;;) {
    int err = 0;
    szResult_t res = connectOnce(addr, deadline, fd, &err);
    if (res == szTimeout)
      return szSetError(szTimeout, "connect to %s: timed out", szSocketAddressString(addr).c_str());
    SZCHECK(res);
    if (err == 0) break;
    bool retry = err == ECONNREFUSED || err == ETIMEDOUT || err == ENETUNREACH ||
                 err == EHOSTUNREACH || err == ECONNRESET || err == EAGAIN;
    if (!retry)
      return szSetError(szSystemError, "connect to %s: %s", szSocketAddressString(addr).c_str(),
                        strerror(err));
    if (szClock::now() + backoff >= deadline)
      return szSetError(szTimeout, "connect to %s: timed out (last attempt: %s)",
                        szSocketAddressString(addr).c_str(), strerror(err));
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(100));
  }
  tune(*fd);
  return szSuccess;
}

szResult_t szSocketAccept(int listenFd, int* fd, int* exhausted) {
  *exhausted = 0;
  for (;;) {
    *fd = accept4(listenFd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (*fd >= 0) {
      tune(*fd);
      return szSuccess;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return szSuccess;
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
      *exhausted = errno;
      return szSuccess;
    }
    return szSetError(szSystemError, "accept: %s", strerror(errno));
  }
}

szResult_t szSocketSendSome(int fd, const void* data, size_t bytes, size_t* offset) {
  while (*offset < bytes) {
    size_t want = bytes - *offset;
    ssize_t n = send(fd, (const char*)data + *offset, want, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return szSuccess;
      return szSocketIoError("send", errno);
    }
    *offset += n;
    if ((size_t)n < want) return szSuccess;  // the send buffer is full
  }
  return szSuccess;
}

szResult_t szSocketRecvSome(int fd, void* data, size_t bytes, size_t* offset) {
  while (*offset < bytes) {
    size_t want = bytes - *offset;
    ssize_t n = recv(fd, (char*)data + *offset, want, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return szSuccess;
      return szSocketIoError("recv", errno);
    }
    if (n == 0) return szSetError(szRemoteError, "socket recv: connection closed by peer");
    *offset += n;
    if ((size_t)n < want) return szSuccess;  // nothing more has arrived yet
  }
  return szSuccess;
}

szResult_t szSocketSendAll(int fd, const void* data, size_t bytes, szDeadline deadline) {
  size_t offset = 0;
  for (;;) {
    SZCHECK(szSocketSendSome(fd, data, bytes, &offset));
    if (offset == bytes) return szSuccess;
    SZCHECK(waitFor(fd, POLLOUT, deadline, "send"));
  }
}

szResult_t szSocketRecvAll(int fd, void* data, size_t bytes, szDeadline deadline) {
  size_t offset = 0;
  for (;;) {
    SZCHECK(szSocketRecvSome(fd, data, bytes, &offset));
    if (offset == bytes) return szSuccess;
    SZCHECK(waitFor(fd, POLLIN, deadline, "recv"));
  }
}

szResult_t szSocketPace(int fd, double bytesPerSecond) {
  uint64_t rate = bytesPerSecond >= 1.8e19 ? ~uint64_t(0) : uint64_t(std::max(bytesPerSecond, 1.0));
  if (setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate)) == 0) return szSuccess;
  uint32_t rate32 = uint32_t(std::min<uint64_t>(rate, ~uint32_t(0)));  // kernels before 4.20 take 32 bits
  if (setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate32, sizeof(rate32)) == 0) return szSuccess;
  return szSetError(szSystemError, "setsockopt(SO_MAX_PACING_RATE, %.0f bytes/s): %s", bytesPerSecond,
                    strerror(errno));
}

uint64_t szHostHash() {
  char name[256] = {0};
  gethostname(name, sizeof(name) - 1);
  return std::hash<std::string>()(name);
}
