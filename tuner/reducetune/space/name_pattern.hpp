// Name expressions: a family's kernel patterns ("rt::tunable::pass<{T}, {Op}, {block_size}>")
// with each {field} replaced by the chosen value's cpp spelling. Only declared values reach a
// name expression; template sources are never edited.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace reducetune {

struct family;
struct variant;

// The {field} names of a pattern, in order; throws invalid_configuration for an unbalanced or
// empty brace.
[[nodiscard]] std::vector<std::string> name_pattern_fields(const std::string &pattern);

// Role → name expression for one variant ({T}: int, long long, float, double; {Op}:
// rt::op_sum, ...). Throws invalid_configuration when the variant is not of the family.
[[nodiscard]] std::map<std::string, std::string> kernel_names(const family &f, const variant &v);

} // namespace reducetune
