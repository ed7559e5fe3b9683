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

// One accept without waiting; the socket comes back tuned as in szSocketConnect. *fd is -1
// when no connection is waiting, or when the process or system is out of descriptors or
// memory: then *exhausted holds the errno (EMFILE, ...), which the caller survives (see
// pending.h). Errors: szSystemError (any other failure).
szResult_t szSocketAccept(int listenFd, int* fd, int* exhausted);

// Moves bytes [*offset, bytes) without waiting and advances *offset; returns once the socket
// would block or took less than asked (a full buffer), so *offset < bytes is not an error.
szResult_t szSocketSendSome(int fd, const void* data, size_t bytes, size_t* offset);
// The error of a failed send or recv (`op`) with errno `err`: szRemoteError where the peer is
// gone (reset, broken pipe), szSystemError otherwise; its message says which.
szResult_t szSocketIoError(const char* op, int err);
szResult_t szSocketRecvSome(int fd, void* data, size_t bytes, size_t* offset);
// Moves all `bytes`, waiting with poll() as needed.
szResult_t szSocketSendAll(int fd, const void* data, size_t bytes, szDeadline deadline);
szResult_t szSocketRecvAll(int fd, void* data, size_t bytes, szDeadline deadline);

// poll() timeout in milliseconds until `deadline` (0 once it passed), rounded up.
int szPollTimeoutMs(szDeadline deadline);
// Closes *fd if open and sets it to -1.
void szSocketClose(int* fd);

// Paces the socket's sends to at most `bytesPerSecond` (SO_MAX_PACING_RATE, the kernel's TCP
// pacing): an emulated slower link. szSystemError where the kernel refuses.
szResult_t szSocketPace(int fd, double bytesPerSecond);

// This node's identity: a hash of its host name. Ranks with equal hashes share a node (the ipc
// wire maps their memory; the default wire choice, src/wire_choice.h).
uint64_t szHostHash();
