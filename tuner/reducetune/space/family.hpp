// A template family's declaration (kernel_templates/<family>/family.json), read and validated
// once at load: every later use (space, labels, name expressions, launch plans) may assume it
// is well formed. The format is fixed by docs/architecture.md, "Template family declaration".
#pragma once

#include "reducetune/space/expression.hpp"
#include "reducetune/space/value.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace reducetune {

class template_library;

enum class parameter_kind { compile, launch };

struct parameter_value {
  value v;
  std::map<std::string, expression> let; // identifiers this value brings into scope
  std::string flag;                      // a warning about this value ("" when none)
};

struct parameter {
  std::string name;
  parameter_kind kind = parameter_kind::compile;
  std::vector<parameter_value> values;
  std::string cpp;   // spelling pattern with {value}; "" spells the value itself
  std::string label; // prefix in a variant label (default: the name)
  std::size_t default_index = 0;
  std::string note; // "note" (or "description") in the declaration

  [[nodiscard]] const value &default_value() const { return values[default_index].v; }
  [[nodiscard]] std::optional<std::size_t> index_of(const value &v) const;
  // The value as written in a name expression (cpp pattern applied).
  [[nodiscard]] std::string cpp_spelling(const value &v) const;
  // "32, 64, 128" (for messages).
  [[nodiscard]] std::string values_text() const;
};

struct constraint {
  expression expr;
  std::string why;
};

struct preset {
  std::string name;
  std::map<std::string, value> values; // parameters not named take their default
  std::string note;
};

struct family {
  std::string name;
  std::string description;
  std::string source;                // relative to the family's folder
  std::vector<std::string> includes; // folders of the library given to NVRTC as headers
  std::vector<parameter> parameters; // declaration order
  std::vector<constraint> constraints;
  expression shared_bytes;                        // "0" when absent
  std::optional<expression> dynamic_shared_bytes; // 0 when absent
  expression protocol;
  expression grid;
  std::map<std::string, std::string> kernels; // role → name-expression pattern
  std::vector<preset> presets;
  bool requires_rdc = false;
  // The entry kernels' argument list ("abi" in family.json): "whole_array" (in, out, n,
  // partials, ticket; the default) or "axis" (in, out, outer, r, inner, partials). Bound in
  // every point's scope as the identifier `abi`; only a whole-array family's points may reach
  // the whole-array runner, runtime and exports (launch_plan::whole_array_abi).
  std::string abi = "whole_array";
  // Test-only families (tests/data/templates) declare the outcome they are built to produce:
  // "compile_error", "launch_error", "verification_error" or "ok"; "" for real families.
  std::string expected;

  // Reads "<name>/family.json" from the library; throws invalid_configuration naming the file
  // and the problem when the declaration is missing or not valid.
  [[nodiscard]] static family load(const template_library &lib, const std::string &name);
  // Every family of the library, sorted by name.
  [[nodiscard]] static std::vector<family> load_all(const template_library &lib);
  // The declaration from JSON text; `lib` (optional) is used to check source and includes.
  [[nodiscard]] static family from_json(const std::string &folder, const std::string &json_text,
                                        const template_library *lib = nullptr);

  [[nodiscard]] const parameter *find_parameter(const std::string &name) const;
  // Indices into `parameters` of each kind, in declaration order.
  [[nodiscard]] std::vector<std::size_t> compile_parameters() const;
  [[nodiscard]] std::vector<std::size_t> launch_parameters() const;
};

} // namespace reducetune
