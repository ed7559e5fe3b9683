/* LD_PRELOAD shim for tests/fault/corrupt_wire_test.sh: flips one bit of the byte at offset
 * SZ_TEST_FLIP_AT (default 8 MiB) of everything this process sends with send(2), once, as a
 * faulty link would; with SZ_TEST_FLIP_EVERY=N, again every N bytes after it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

static unsigned long long sent, next;
static int flipped, started;

ssize_t send(int fd, const void* buf, size_t len, int flags) {
  static ssize_t (*real)(int, const void*, size_t, int);
  if (!real) real = (ssize_t(*)(int, const void*, size_t, int))dlsym(RTLD_NEXT, "send");
  if (!started) {
    const char* at = getenv("SZ_TEST_FLIP_AT");
    next = at ? strtoull(at, NULL, 0) : (8ull << 20);
    started = 1;
  }
  const unsigned long long target = next;
  if (!flipped && sent <= target && target < sent + len) {
    char* copy = malloc(len);
    if (!copy) return real(fd, buf, len, flags);
    memcpy(copy, buf, len);
    copy[target - sent] ^= 0x10;
    ssize_t n = real(fd, copy, len, flags);
    free(copy);
    if (n > 0 && (unsigned long long)n > target - sent) {  /* the flipped byte left */
      const char* every = getenv("SZ_TEST_FLIP_EVERY");
      if (every && strtoull(every, NULL, 0) > 0) next = target + strtoull(every, NULL, 0);
      else flipped = 1;
    }
    if (n > 0) sent += (unsigned long long)n;
    return n;
  }
  ssize_t n = real(fd, buf, len, flags);
  if (n > 0) sent += (unsigned long long)n;
  return n;
}
