// The data patterns' random numbers (patterns.cpp, half_patterns.cpp).
#pragma once

#include <cstdint>

namespace reducetune {

// splitmix64: tiny, fast, and identical everywhere (the standard distributions are not).
class data_generator {
public:
  explicit data_generator(std::uint64_t seed) : m_state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (m_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; } // [0, 1)
  long long between(long long lo, long long hi) { // [lo, hi]
    return lo + static_cast<long long>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }

private:
  std::uint64_t m_state;
};

} // namespace reducetune
