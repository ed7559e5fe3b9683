// A seeded noise for simulated send times (tests/auto_model_test.cc, tests/auto_exchange_test.cc).
#pragma once

#include <cmath>
#include <cstdint>

namespace sztest {

// A wire whose rate moves from send to send, as tcp over loopback (on one H100's host, a 4 KiB
// send took 42.6 us in one call and 29.7 us in the next): each send's time times a factor drawn
// from a seeded generator, log-normal with sigma 12%, and one send in 20 twice as slow (another
// thread's burst). The fixed modes see the same factors, send by send.
struct Noise {
  explicit Noise(uint32_t seed) : state(seed * 2654435761u + 1) {}
  uint32_t state;
  double uniform() {
    state = state * 1664525u + 1013904223u;
    return (double(state >> 8) + 0.5) / double(1u << 24);
  }
  double factor() {
    const double u1 = uniform(), u2 = uniform();
    const double normal = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
    return std::exp(0.12 * normal) * (uniform() < 0.05 ? 2.0 : 1.0);
  }
};

}  // namespace sztest
