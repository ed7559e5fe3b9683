// Reads one SZ_* environment parameter; the cached getters live in param.h.
#include "base/param.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include "base/debug.h"

int64_t szLoadParam(const char* env, int64_t deflt) {
  const char* s = getenv(env);
  if (s == nullptr || *s == '\0') return deflt;
  errno = 0;
  char* end = nullptr;
  long long v = strtoll(s, &end, 0);
  bool digits = end != s;
  int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : *end == 'G' || *end == 'g' ? 30 : 0;
  if (shift) ++end;  // sizes may say 512K, 4M, 1G (binary)
  if (errno != 0 || !digits || *end != '\0' || v < 0 || v > (LLONG_MAX >> shift)) {
    // Not only at SZ_DEBUG=WARN: a setting that silently does nothing is worse than a line.
    fprintf(stderr, "SplitZip: invalid value '%s' for %s (a number >= 0, optionally with K, M or G), "
            "using the default %lld\n", s, env, (long long)deflt);
    return deflt;
  }
  v <<= shift;
  INFO(SZ_INIT, "%s set by environment to %lld", env, v);
  return v;
}
