// SZ_IB_HCA parsing and matching (ib_hca.h).
#include "transport/ib_hca.h"

#include <cstdlib>
#include <cstring>

#include "base/checks.h"

namespace {

constexpr size_t kMaxNameChars = 63;  // IBV_SYSFS_NAME_MAX - 1

szResult_t badEntry(const char* spec, const std::string& entry, const char* why) {
  return szSetError(szInvalidArgument, "SZ_IB_HCA=%s: entry '%s' %s (syntax: [^][=]name[:port],...)", spec,
                    entry.c_str(), why);
}

szResult_t parseRule(const char* spec, const std::string& entry, szIbHcaRule* rule) {
  const size_t colon = entry.find(':');
  rule->name = entry.substr(0, colon);
  rule->port = 0;
  if (rule->name.empty()) return badEntry(spec, entry, "has no device name");
  if (rule->name.size() > kMaxNameChars) return badEntry(spec, entry, "has a name longer than 63 characters");
  if (colon == std::string::npos) return szSuccess;
  const std::string port = entry.substr(colon + 1);
  char* end = nullptr;
  const long p = port.empty() ? 0 : strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 1 || p > 255 || port[0] == '+' || port[0] == '-')
    return badEntry(spec, entry, "has a port that is not a number from 1 to 255");
  rule->port = int(p);
  return szSuccess;
}

}  // namespace

szResult_t szIbParseHcaFilter(const char* spec, szIbHcaFilter* filter) {
  *filter = szIbHcaFilter{};
  if (spec == nullptr || *spec == '\0') return szSuccess;
  const char* s = spec;
  if (*s == '^') filter->exclude = true, ++s;
  if (*s == '=') filter->exact = true, ++s;
  const std::string list = s;
  size_t begin = 0;
  for (;;) {
    const size_t comma = list.find(',', begin);
    const std::string entry = list.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (filter->rules.size() == kSzIbMaxHcaRules)
      return szSetError(szInvalidArgument, "SZ_IB_HCA=%s: more than %zu entries", spec, kSzIbMaxHcaRules);
    szIbHcaRule rule;
    SZCHECK(parseRule(spec, entry, &rule));
    filter->rules.push_back(rule);
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return szSuccess;
}

bool szIbHcaSelected(const szIbHcaFilter& filter, const char* device, int port) {
  if (filter.rules.empty()) return true;
  bool named = false;
  for (const szIbHcaRule& r : filter.rules) {
    const bool nameMatches = filter.exact ? r.name == device : strncmp(device, r.name.c_str(), r.name.size()) == 0;
    if (nameMatches && (r.port == 0 || r.port == port)) named = true;
  }
  return named != filter.exclude;
}
