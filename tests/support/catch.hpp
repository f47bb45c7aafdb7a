// Catch2 v2 (Debian, CI) and v3 (the GPU machine) behind one include.
#pragma once

#include <string>

#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_all.hpp>
#define RT_CATCH_V3 1
#else
#include <catch2/catch.hpp>
#define RT_CATCH_V3 0
#endif

// A matcher for "the message contains this text" under both versions (v2 calls it Contains,
// v3 ContainsSubstring; v3's Contains matches range elements).
namespace rt_test {
#if RT_CATCH_V3
inline auto has_text(const std::string &s) { return Catch::Matchers::ContainsSubstring(s); }
#else
inline auto has_text(const std::string &s) { return Catch::Matchers::Contains(s); }
#endif
} // namespace rt_test
