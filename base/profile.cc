// The per-operation profile's sums (base/profile.h); empty unless built with `make PROFILE=1`.
#include "base/profile.h"

#if SZ_PROFILE
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace sz::profile {
namespace {

struct Sum {
  unsigned long long n = 0;
  double total = 0, max = 0;
};

struct Table {
  std::mutex mu;
  std::map<const char*, Sum> sums;  // by the name's address: no allocation per sample
  void print() {
    std::lock_guard<std::mutex> lock(mu);
    std::map<std::string, Sum> byName;  // sorted, and equal names of two literals merged
    for (const auto& [name, s] : sums) {
      Sum& m = byName[name];
      m.n += s.n;
      m.total += s.total;
      if (s.max > m.max) m.max = s.max;
    }
    for (const auto& [name, s] : byName)
      fprintf(stderr, "PROFILE %-40s n=%llu mean_us=%.3f max_us=%.3f total_ms=%.3f\n", name.c_str(), s.n,
              s.total / double(s.n) * 1e-3, s.max * 1e-3, s.total * 1e-6);
  }
};

// Never destroyed (a sample from a thread or destructor that runs late at exit stays defined);
// printed at exit.
Table& table() {
  static Table* t = [] {
    Table* made = new Table;
    std::atexit([] { table().print(); });
    return made;
  }();
  return *t;
}

}  // namespace

void add(const char* name, double ns) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  Sum& s = t.sums[name];
  ++s.n;
  s.total += ns;
  if (ns > s.max) s.max = ns;
}

}  // namespace sz::profile
#endif
