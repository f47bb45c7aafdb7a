#include "reducetune/space/name_pattern.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/space/family.hpp"
#include "reducetune/space/variant.hpp"

namespace reducetune {
namespace {

// Calls on_text for literal runs and on_field for each {field}.
template <typename Text, typename Field>
void walk(const std::string &pattern, Text on_text, Field on_field) {
  std::size_t pos = 0;
  while (pos < pattern.size()) {
    const std::size_t open = pattern.find_first_of("{}", pos);
    if (open == std::string::npos) {
      on_text(pattern.substr(pos));
      return;
    }
    if (pattern[open] == '}')
      throw invalid_configuration("name pattern '" + pattern + "': '}' at position " +
                                  std::to_string(open) + " closes nothing");
    const std::size_t close = pattern.find_first_of("{}", open + 1);
    if (close == std::string::npos || pattern[close] != '}' || close == open + 1)
      throw invalid_configuration("name pattern '" + pattern + "': the '{' at position " +
                                  std::to_string(open) + " does not enclose a name");
    on_text(pattern.substr(pos, open - pos));
    on_field(pattern.substr(open + 1, close - open - 1));
    pos = close + 1;
  }
}

} // namespace

std::vector<std::string> name_pattern_fields(const std::string &pattern) {
  std::vector<std::string> out;
  walk(
      pattern, [](const std::string &) {}, [&](const std::string &f) { out.push_back(f); });
  return out;
}

std::map<std::string, std::string> kernel_names(const family &f, const variant &v) {
  validate(f, v);
  std::map<std::string, std::string> out;
  for (const auto &[role, pattern] : f.kernels) {
    std::string name;
    walk(
        pattern, [&](const std::string &text) { name += text; },
        [&](const std::string &field) {
          if (field == "T")
            name += cpp_type(v.type);
          else if (field == "Op")
            name += cpp_op(v.op);
          else
            name += f.find_parameter(field)->cpp_spelling(value_of(f, v, field));
        });
    out.emplace(role, std::move(name));
  }
  return out;
}

} // namespace reducetune
