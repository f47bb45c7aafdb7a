// Catch2 v2 (Debian, CI) and v3 (the GPU machine) behind one include.
#pragma once

#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_all.hpp>
#define RT_CATCH_V3 1
#else
#include <catch2/catch.hpp>
#define RT_CATCH_V3 0
#endif
