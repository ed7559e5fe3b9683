// TCP helpers shared by the bootstrap and the tcp wire: addresses, listen / connect / accept,
// and whole or partial transfers. Every socket made here is non-blocking and close-on-exec;
// the helpers that wait do so with poll() until an absolute deadline, and report
//   szTimeout      the deadline passed,
//   szRemoteError  the peer closed or reset the connection (EOF, ECONNRESET, EPIPE; sends use
//                  MSG_NOSIGNAL, so a dead peer never raises SIGPIPE),
//   szSystemError  any other failure,
// each with a message (szSetError) naming the operation and, where known, the address.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "splitzip.h"

// An IPv4 or IPv6 address with its port. 28 bytes (a sockaddr_storage takes 128), so that it
// fits in a szUniqueId next to the secret; it travels in native byte order between hosts of
// one cluster.
union szSocketAddress {
  sockaddr sa;
  sockaddr_in sin;
  sockaddr_in6 sin6;
};

using szClock = std::chrono::steady_clock;
using szDeadline = szClock::time_point;
szDeadline szDeadlineAfterMs(int64_t ms);

// "1.2.3.4:5678" or "[fe80::1]:5678".
std::string szSocketAddressString(const szSocketAddress& addr);
// Parses "host:port" or "[ipv6]:port"; host may be a name (getaddrinfo, first result).
// Errors: szInvalidArgument (malformed, port not 1..65535, name does not resolve).
szResult_t szSocketParseAddress(const char* hostPort, szSocketAddress* addr);
// The address other ranks should use to reach this host, with port 0: the first address of the
// interface named by SZ_SOCKET_IFNAME (a name prefix, e.g. "eth") if set and found, else the
// first non-loopback IPv4 address of an interface that is up, else 127.0.0.1.
szResult_t szSocketLocalAddress(szSocketAddress* addr);

// Listens on `addr` (port 0: an ephemeral port) and writes the bound port back into `addr`.
szResult_t szSocketListen(szSocketAddress* addr, int* fd);
// Connects to `addr`, retrying refused or unreachable attempts until the deadline (the peer may
// not listen yet). The socket comes back tuned (TCP_NODELAY, SZ_SOCKET_BUF_BYTES).
szResult_t szSocketConnect(const szSocketAddress& addr, szDeadline deadline, int* fd);

// What a server does with a connection whose greeting it has read.
enum class szHelloVerdict {
  kDrop,  // not one of ours (bad secret, nonsense fields): close it and keep waiting
  kKeep,  // the callback now owns the fd; keep waiting for more connections
  kDone,  // the callback owns the fd (if it kept it) and needs no more connections
};
// Accepts connections on `listenFd` and reads exactly `helloBytes` from each, many at a time, so
// that a silent or slow stranger delays no one; `onHello` judges each complete greeting.
// Connections that close early are dropped. Returns szSuccess once onHello says kDone,
// szTimeout at the deadline. Accepted sockets are tuned as in szSocketConnect.
szResult_t szSocketAcceptHellos(int listenFd, size_t helloBytes, szDeadline deadline,
                                const std::function<szHelloVerdict(int fd, const void* hello)>& onHello);

// Moves bytes [*offset, bytes) without waiting and advances *offset; returns once the socket
// would block or took less than asked (a full buffer), so *offset < bytes is not an error.
szResult_t szSocketSendSome(int fd, const void* data, size_t bytes, size_t* offset);
szResult_t szSocketRecvSome(int fd, void* data, size_t bytes, size_t* offset);
// Moves all `bytes`, waiting with poll() as needed.
szResult_t szSocketSendAll(int fd, const void* data, size_t bytes, szDeadline deadline);
szResult_t szSocketRecvAll(int fd, void* data, size_t bytes, szDeadline deadline);

// poll() timeout in milliseconds until `deadline` (0 once it passed), rounded up.
int szPollTimeoutMs(szDeadline deadline);
// Closes *fd if open and sets it to -1.
void szSocketClose(int* fd);
