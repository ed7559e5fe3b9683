// The per-operation profile (issue 31: where a 4 KiB operation's time goes), compiled in by
// `make PROFILE=1` (SZ_PROFILE=1) and absent otherwise: the macros then expand to nothing and
// cost nothing. Host phases are timed with the steady clock (SZ_PROFILE_SCOPE); the slot
// kernels' phases come from their %globaltimer stamps (kernels/slot_ops.cuh) and are added by
// the slot path when it reaps a launch (SZ_PROFILE_ADD). Each name's count, mean and largest
// value are printed to stderr when the process exits, one "PROFILE" line per name:
//   PROFILE <name> n=<count> mean_us=<mean> max_us=<largest> total_ms=<sum>
// tests/gpu/run_all.sh --latency runs such a build (perf/results/2026-12-06_h100_latency_profile.md).
#pragma once

#if SZ_PROFILE
#include <chrono>

namespace sz::profile {

// Adds one sample of `ns` nanoseconds to `name` (a string literal: it is kept by pointer).
void add(const char* name, double ns);

class Scope {
 public:
  explicit Scope(const char* name) : name_(name), t0_(std::chrono::steady_clock::now()) {}
  ~Scope() { add(name_, double(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0_).count())); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  const char* name_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace sz::profile

#define SZ_PROFILE_CAT2(a, b) a##b
#define SZ_PROFILE_CAT(a, b) SZ_PROFILE_CAT2(a, b)
// Times the rest of the enclosing block as one sample of `name`.
#define SZ_PROFILE_SCOPE(name) ::sz::profile::Scope SZ_PROFILE_CAT(szProfileScope, __LINE__)(name)
// One sample of `ns` nanoseconds for `name`.
#define SZ_PROFILE_ADD(name, ns) ::sz::profile::add((name), double(ns))
#else
#define SZ_PROFILE_SCOPE(name) static_assert(true, "")
#define SZ_PROFILE_ADD(name, ns) static_cast<void>(0)
#endif
