// The data patterns' random numbers (patterns.cpp, half_patterns.cpp).
#pragma once

#include <cstdint>

namespace reducetune {

// splitmix64: tiny, fast, and identical everywhere (the standard distributions are not).
class data_generator {
public:
  explicit data_generator(std::uint64_t seed) : m_state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (m_state += step);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // As if next() had been called k times (the state advances by a constant per draw): what
  // lets a generation start mid-way (patterns.cpp, fill_chunks).
  void skip(std::uint64_t k) { m_state += k * step; }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; } // [0, 1)
  long long between(long long lo, long long hi) { // [lo, hi]
    return lo + static_cast<long long>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }

private:
  static constexpr std::uint64_t step = 0x9e3779b97f4a7c15ULL;
  std::uint64_t m_state;
};

} // namespace reducetune
