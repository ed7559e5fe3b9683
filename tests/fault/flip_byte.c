/* LD_PRELOAD shim for tests/fault/corrupt_wire_test.sh: flips one bit of the byte at offset
 * SZ_TEST_FLIP_AT (default 8 MiB) of everything this process sends with send(2) or sendmsg(2),
 * once, as a faulty link would; with SZ_TEST_FLIP_EVERY=N, again every N bytes after it. For one
 * sending thread (the perf tool's proxy): the counters are not synchronized. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

static unsigned long long sent, next;
static int flipped, started;

static ssize_t (*realSend)(int, const void*, size_t, int);

/* Whether the next target lies in the `len` bytes about to go. */
static int hits(size_t len) {
  if (!started) {
    const char* at = getenv("SZ_TEST_FLIP_AT");
    next = at ? strtoull(at, NULL, 0) : (8ull << 20);
    started = 1;
  }
  return !flipped && sent <= next && next < sent + len;
}

/* Sends `len` bytes of `buf` with the target's bit flipped; moves the target on past them. */
static ssize_t sendFlipped(int fd, const void* buf, size_t len, int flags) {
  const unsigned long long target = next;
  char* copy = malloc(len);
  if (!copy) return realSend(fd, buf, len, flags);
  memcpy(copy, buf, len);
  copy[target - sent] ^= 0x10;
  ssize_t n = realSend(fd, copy, len, flags);
  free(copy);
  if (n > 0 && (unsigned long long)n > target - sent) { /* the flipped byte left */
    const char* every = getenv("SZ_TEST_FLIP_EVERY");
    const unsigned long long step = every ? strtoull(every, NULL, 0) : 0;
    if (step == 0) flipped = 1;
    else /* the next target past what this call sent (one flip per call at most) */
      for (next = target + step; next < sent + (unsigned long long)n; next += step) {
      }
  }
  if (n > 0) sent += (unsigned long long)n;
  return n;
}

ssize_t send(int fd, const void* buf, size_t len, int flags) {
  if (!realSend) realSend = (ssize_t(*)(int, const void*, size_t, int))dlsym(RTLD_NEXT, "send");
  if (hits(len)) return sendFlipped(fd, buf, len, flags);
  ssize_t n = realSend(fd, buf, len, flags);
  if (n > 0) sent += (unsigned long long)n;
  return n;
}

/* The tcp wire's messages of two pieces (a slot header and a payload in place) go as one sendmsg:
 * where the target falls in one, its bytes go gathered, flipped, with send. */
ssize_t sendmsg(int fd, const struct msghdr* m, int flags) {
  static ssize_t (*real)(int, const struct msghdr*, int);
  if (!real) real = (ssize_t(*)(int, const struct msghdr*, int))dlsym(RTLD_NEXT, "sendmsg");
  if (!realSend) realSend = (ssize_t(*)(int, const void*, size_t, int))dlsym(RTLD_NEXT, "send");
  size_t len = 0;
  for (size_t i = 0; i < m->msg_iovlen; ++i) len += m->msg_iov[i].iov_len;
  if (hits(len)) {
    char* flat = malloc(len);
    if (flat) {
      size_t at = 0;
      for (size_t i = 0; i < m->msg_iovlen; ++i) {
        memcpy(flat + at, m->msg_iov[i].iov_base, m->msg_iov[i].iov_len);
        at += m->msg_iov[i].iov_len;
      }
      ssize_t n = sendFlipped(fd, flat, len, flags);
      free(flat);
      return n;
    }
  }
  ssize_t n = real(fd, m, flags);
  if (n > 0) sent += (unsigned long long)n;
  return n;
}
