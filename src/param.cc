// Reads one SZ_* environment parameter; the cached getters live in param.h.
#include "param.h"

#include <cerrno>
#include <cstdlib>

#include "debug.h"

int64_t szLoadParam(const char* env, int64_t deflt) {
  const char* s = getenv(env);
  if (s == nullptr || *s == '\0') return deflt;
  errno = 0;
  char* end = nullptr;
  long long v = strtoll(s, &end, 0);
  if (errno != 0 || *end != '\0') {
    WARN("invalid value '%s' for %s, using default %lld", s, env, (long long)deflt);
    return deflt;
  }
  INFO(SZ_INIT, "%s set by environment to %lld", env, v);
  return v;
}
