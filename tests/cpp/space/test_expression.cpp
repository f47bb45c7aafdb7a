#include "catch.hpp"

#include "toy_family.hpp"

#include "reducetune/space/expression.hpp"

#include <initializer_list>
#include <utility>

using namespace reducetune;
using rt_test::config_error_of;
using rt_test::contains;

namespace {
value eval(const std::string &text, const scope &s = {}) {
  return expression::parse(text).eval(s);
}
std::int64_t ival(const std::string &text, const scope &s = {}) {
  return expression::parse(text).eval_int(s);
}

// Each expression (no identifiers) gives its integer.
void check_values(std::initializer_list<std::pair<const char *, std::int64_t>> cases) {
  for (const auto &[text, want] : cases) {
    INFO(text);
    CHECK(ival(text) == want);
  }
}

// Evaluating (or parsing) each expression fails with an error that says the words given.
void check_errors(std::initializer_list<std::pair<const char *, const char *>> cases,
                  bool parse_only = false) {
  for (const auto &[text, words] : cases) {
    INFO(text);
    const std::string t = text;
    CHECK(contains(config_error_of([&] {
                     if (parse_only)
                       (void)expression::parse(t);
                     else
                       (void)ival(t);
                   }),
                   words));
  }
}
} // namespace

TEST_CASE("integer arithmetic follows C precedence and truncating division", "[space]") {
  check_values({{"42", 42},
                {"1 + 2 * 3", 7},
                {"(1 + 2) * 3", 9},
                {"10 - 4 - 3", 3},
                {"7 / 2", 3},
                {"-7 / 2", -7 / 2},
                {"7 % 3", 1},
                {"-3 + 5", 2},
                {"!0 + !5", 1}});
}

TEST_CASE("comparisons and logic give 1 or 0", "[space]") {
  check_values({{"3 < 4", 1},
                {"4 <= 4", 1},
                {"5 > 6", 0},
                {"5 >= 6", 0},
                {"2 == 2 && 3 != 3", 0},
                {"0 || 7", 1},
                {"'abc' == 'abc'", 1},
                {"'abc' < 'abd'", 1}});
}

TEST_CASE("the conditional operator is right-associative and lowest in precedence", "[space]") {
  check_values({{"1 ? 2 : 3", 2}, {"0 ? 2 : 0 ? 3 : 4", 4}, {"1 + 1 == 2 ? 10 : 20", 10}});
  CHECK(eval("0 ? 'a' : 'b'") == value{std::string("b")});
}

TEST_CASE("functions compute min, max, ceil_div, log2 and is_pow2", "[space]") {
  check_values({{"min(3, -2)", -2},
                {"max(3, -2)", 3},
                {"ceil_div(10, 4)", 3},
                {"ceil_div(8, 4)", 2},
                {"ceil_div(1, 1024)", 1},
                {"log2(1)", 0},
                {"log2(1024)", 10},
                {"log2(1000)", 9},
                {"is_pow2(256)", 1},
                {"is_pow2(96)", 0},
                {"is_pow2(0)", 0}});
}

TEST_CASE("identifiers come from the scope, strings concatenate", "[space]") {
  scope s;
  s.set("block_size", std::int64_t{256});
  s.set("warp", std::string("shuffle"));
  CHECK(ival("block_size * 4", s) == 1024);
  CHECK(ival("warp == 'shuffle'", s) == 1);
  CHECK(eval("warp + '_x'", s) == value{std::string("shuffle_x")});
  const auto e = expression::parse("min(block_size, n) + warp_size");
  CHECK(e.identifiers() == std::set<std::string>{"block_size", "n", "warp_size"});
}

TEST_CASE("&& and || short-circuit, so the unevaluated side may be invalid", "[space]") {
  check_values({{"0 && 1 / 0", 0}, {"1 || unknown_name", 1}, {"1 ? 5 : 1 / 0", 5}});
}

TEST_CASE("let bindings are evaluated lazily in the looking-up scope", "[space]") {
  scope s;
  s.set("block_size", std::int64_t{128});
  s.bind("items_per_block", expression::parse("2 * block_size"));
  s.bind("bytes", expression::parse("items_per_block * 4"));
  CHECK(ival("bytes", s) == 1024);
  s.set("block_size", std::int64_t{64});
  CHECK(ival("bytes", s) == 512);
  CHECK(s.get("items_per_block") == value{std::int64_t{128}});
}

TEST_CASE("a cycle among bindings is an error that names it", "[space]") {
  scope s;
  s.bind("a", expression::parse("b + 1"));
  s.bind("b", expression::parse("a"));
  const auto msg = config_error_of([&] { (void)ival("a", s); });
  CHECK(contains(msg, "cycle"));
  CHECK(contains(msg, "a -> b -> a"));
}

TEST_CASE("division by zero names the expression", "[space]") {
  const auto msg = config_error_of([] { (void)ival("8 / (2 - 2)"); });
  CHECK(contains(msg, "division by zero"));
  CHECK(contains(msg, "'8 / (2 - 2)'"));
  check_errors({{"8 % 0", "division by zero"}, {"ceil_div(8, 0)", "division by zero"}});
}

TEST_CASE("an unknown identifier is named in the error", "[space]") {
  const auto msg = config_error_of([] { (void)ival("blok_size * 2"); });
  CHECK(contains(msg, "unknown identifier 'blok_size'"));
  CHECK(contains(msg, "blok_size * 2"));
}

TEST_CASE("parse errors name the expression and the position", "[space]") {
  const auto unexpected = config_error_of([] { (void)expression::parse("1 + * 2"); });
  CHECK(contains(unexpected, "'1 + * 2'"));
  CHECK(contains(unexpected, "position 4"));
  check_errors({{"(1 + 2", "expected ')'"},
                {"'open", "unterminated"},
                {"sqrt(4)", "unknown function 'sqrt'"},
                {"min(1)", "2 arguments"},
                {"1 2", "position 2"},
                {"a = 1", "position 2"},
                {"", "end of expression"}},
               true);
}

TEST_CASE("type mismatches and overflow are errors, not wrong answers", "[space]") {
  check_errors({{"'a' * 2", "needs integers"},
                {"'a' == 1", "compares"},
                {"'a' ? 1 : 2", "must be an integer"},
                {"9223372036854775807 + 1", "overflow"},
                {"log2(0)", "positive"}});
  CHECK(contains(config_error_of([] { (void)expression::parse("'x'").eval_int({}); }),
                 "integer is needed"));
}
