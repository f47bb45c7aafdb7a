// A small family declaration for the space tests, as JSON that a test may alter before loading
// it into an in-memory template library.
#pragma once

#include "reducetune/errors.hpp"
#include "reducetune/templates/template_library.hpp"
#include "reducetune/space/family.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace rt_test {

inline nlohmann::json toy_declaration() {
  return nlohmann::json::parse(R"json({
    "family": "toy",
    "description": "a family for tests",
    "source": "toy.cuh",
    "includes": ["common"],
    "parameters": [
      {"name": "block_size", "kind": "compile", "label": "bs",
       "values": [32, 64, 128, 256, 512, 1024, 2048], "default": 256},
      {"name": "warp", "kind": "compile", "values": ["shuffle", "redux", "volatile_unsafe"],
       "cpp": "rt::warp_strategy::{value}", "default": "shuffle",
       "flags": {"volatile_unsafe": "racy on Volta and later"}},
      {"name": "vec", "kind": "compile", "label": "v", "values": [1, 2, 4], "default": 1},
      {"name": "finish", "kind": "compile", "label": "fin", "cpp": "rt::finish::{value}",
       "values": ["two_pass", {"value": "atomic", "let": {"uses_atomics": "1"}}, "ticket"],
       "default": "two_pass"},
      {"name": "elements_per_thread", "kind": "launch", "label": "ept", "values": [1, 4, 16],
       "default": 4},
      {"name": "cap", "kind": "launch", "values": [0, 2], "default": 0}
    ],
    "constraints": [
      {"expr": "warp != 'redux' || is_integer", "why": "redux needs integers"},
      {"expr": "vec * sizeof_T <= 16", "why": "a vector load is at most 16 bytes"},
      {"expr": "elements_per_thread % vec == 0", "why": "whole vectors per thread"}
    ],
    "shared_bytes": "block_size * sizeof_T",
    "protocol": "finish",
    "grid": "cap == 0 ? ceil_div(n, block_size * elements_per_thread) : min(ceil_div(n, block_size * elements_per_thread), cap * sm_count)",
    "kernels": {
      "pass": "rt::toy::pass<{T}, {Op}, {block_size}, {warp}, {vec}, {finish}>",
      "final": "rt::toy::final_pass<{T}, {Op}, {block_size}>",
      "init": "rt::init_identity<{T}, {Op}>"
    },
    "presets": [
      {"name": "good", "values": {"block_size": 128, "warp": "shuffle", "elements_per_thread": 16},
       "note": "a test preset"}
    ]
  })json");
}

// A library holding the declaration (as toy/family.json), its source and a common/ header.
inline reducetune::template_library library_with(const nlohmann::json &decl,
                                                 const std::string &folder = "toy") {
  reducetune::template_library lib;
  lib.put("common/rt_ops.cuh", "// operators\n");
  lib.put(folder + "/toy.cuh", "// kernels\n");
  lib.put(folder + "/family.json", decl.dump(2));
  return lib;
}

inline reducetune::family load_toy(const nlohmann::json &decl = toy_declaration()) {
  return reducetune::family::load(library_with(decl), "toy");
}

// The message of the invalid_configuration that f throws ("" when it throws none).
template <typename F> std::string config_error_of(F &&f) {
  try {
    f();
  } catch (const reducetune::invalid_configuration &e) {
    return e.what();
  }
  return "";
}

inline bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

} // namespace rt_test
