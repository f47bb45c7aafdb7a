// Helpers of the store tests that record typed points and export them: the embedded template
// library, a point's measurement as the store writes it, and running a command (the C++
// compiler on an exported header, then the program it built).
#pragma once

#include "catch.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>

#include "db_test_support.hpp"
#include "reducetune/db/point_records.hpp"
#include "reducetune/templates/template_library.hpp"

namespace rt_test {

// Loaded once per test executable: every export and launch rule reads the same library.
inline const reducetune::template_library &embedded_library() {
  static const reducetune::template_library l = reducetune::template_library::embedded();
  return l;
}

// The measurement of the point `params` names in s (the others at their defaults) at size n:
// compile parameters with the variant, launch parameters with the measurement.
inline reducetune::db::measurement_record measured_point(const reducetune::search_space &s,
                                                         const reducetune::parameter_map &params,
                                                         std::int64_t device, std::uint64_t n,
                                                         double seconds) {
  const reducetune::point p = s.point_of(params);
  auto m = measurement(device, n, 0, seconds);
  m.variant = reducetune::db::variant_record_of(s, p);
  m.launch_label = reducetune::launch_label(s.decl(), p);
  m.launch_parameters_json = reducetune::db::launch_parameters_json(s, p);
  return m;
}

// The standard output of a shell command; its wait status in `status`.
inline std::string run_command(const std::string &command, int &status) {
  std::string out;
  FILE *p = ::popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  std::size_t got = 0;
  while ((got = std::fread(buf.data(), 1, buf.size(), p)) > 0)
    out.append(buf.data(), got);
  status = ::pclose(p);
  return out;
}

// The standard output of a shell command that must succeed (its output shown if not).
inline std::string run_ok(const std::string &command) {
  int status = 0;
  std::string out = run_command(command, status);
  INFO(command << "\n" << out);
  REQUIRE(status == 0);
  return out;
}

} // namespace rt_test
