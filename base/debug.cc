// SZ_DEBUG / SZ_DEBUG_SUBSYS logging to stderr; settings read once.
#include "base/debug.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unistd.h>

namespace {

struct DebugSettings {
  szDebugLevel level = SZ_LOG_NONE;
  unsigned long mask = SZ_ALL;
};

unsigned long parseSubsys(const char* s) {
  static const struct { const char* name; unsigned long bit; } kNames[] = {
      {"INIT", SZ_INIT}, {"CODEC", SZ_CODEC}, {"KERNEL", SZ_KERNEL}, {"NET", SZ_NET}, {"P2P", SZ_P2P},
      {"ALL", (unsigned long)SZ_ALL}};
  unsigned long mask = 0;
  std::string list(s);
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t end = list.find(',', pos);
    if (end == std::string::npos) end = list.size();
    std::string tok = list.substr(pos, end - pos);
    bool known = false;
    for (const auto& n : kNames)
      if (strcasecmp(tok.c_str(), n.name) == 0) {
        mask |= n.bit;
        known = true;
      }
    if (!known)  // as with every SZ_* value: reported, never silently ignored
      fprintf(stderr, "SplitZip: invalid subsystem '%s' in SZ_DEBUG_SUBSYS=%s (INIT, CODEC, KERNEL, NET, P2P or "
              "ALL, comma-separated), ignored\n", tok.c_str(), s);
    pos = end + 1;
  }
  return mask;
}

const DebugSettings& settings() {
  static const DebugSettings s = [] {
    DebugSettings d;
    if (const char* lvl = getenv("SZ_DEBUG")) {
      if (strcasecmp(lvl, "WARN") == 0) d.level = SZ_LOG_WARN;
      else if (strcasecmp(lvl, "INFO") == 0) d.level = SZ_LOG_INFO;
      else if (strcasecmp(lvl, "TRACE") == 0) d.level = SZ_LOG_TRACE;
      else if (*lvl != '\0')
        fprintf(stderr, "SplitZip: invalid value '%s' for SZ_DEBUG (WARN, INFO or TRACE), logging off\n", lvl);
    }
    if (const char* sub = getenv("SZ_DEBUG_SUBSYS")) d.mask = parseSubsys(sub);
    return d;
  }();
  return s;
}

}  // namespace

void szDebugLog(szDebugLevel level, unsigned long subsys, const char* file, int line,
                const char* fmt, ...) {
  const DebugSettings& s = settings();
  if (level > s.level || !(subsys & s.mask)) return;
  static std::mutex mu;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  const char* tag = level == SZ_LOG_WARN ? "WARN" : level == SZ_LOG_INFO ? "INFO" : "TRACE";
  std::lock_guard<std::mutex> lock(mu);
  if (level == SZ_LOG_WARN)
    fprintf(stderr, "splitzip %d %s %s:%d %s\n", (int)getpid(), tag, file, line, msg);
  else
    fprintf(stderr, "splitzip %d %s %s\n", (int)getpid(), tag, msg);
}
