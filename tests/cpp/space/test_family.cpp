#include "catch.hpp"

#include "toy_family.hpp"

using namespace reducetune;
using rt_test::config_error_of;
using rt_test::contains;
using rt_test::load_toy;
using rt_test::toy_declaration;

namespace {
std::string load_error(const nlohmann::json &decl) {
  return config_error_of([&] { (void)load_toy(decl); });
}
} // namespace

TEST_CASE("a family declaration loads its parameters in declaration order", "[space]") {
  const family f = load_toy();
  CHECK(f.name == "toy");
  CHECK(f.source == "toy.cuh");
  CHECK(f.includes == std::vector<std::string>{"common"});
  REQUIRE(f.parameters.size() == 6);
  CHECK(f.parameters[0].name == "block_size");
  CHECK(f.parameters[0].label == "bs");
  CHECK(f.parameters[0].default_value() == value{std::int64_t{256}});
  CHECK(f.parameters[1].label == "warp"); // no label: the name
  CHECK(f.parameters[1].cpp_spelling(std::string("shuffle")) == "rt::warp_strategy::shuffle");
  CHECK(f.parameters[2].cpp_spelling(std::int64_t{4}) == "4");
  CHECK(f.parameters[4].kind == parameter_kind::launch);
  CHECK(f.compile_parameters() == std::vector<std::size_t>{0, 1, 2, 3});
  CHECK(f.launch_parameters() == std::vector<std::size_t>{4, 5});
  CHECK(f.constraints.size() == 3);
  CHECK(f.constraints[1].why == "a vector load is at most 16 bytes");
  CHECK(f.kernels.at("init") == "rt::init_identity<{T}, {Op}>");
  CHECK_FALSE(f.requires_rdc);
  CHECK_FALSE(f.dynamic_shared_bytes.has_value());
}

TEST_CASE("values may carry let bindings and flags", "[space]") {
  const family f = load_toy();
  const parameter &finish = *f.find_parameter("finish");
  CHECK(finish.values[0].let.empty());
  REQUIRE(finish.values[1].let.count("uses_atomics") == 1);
  CHECK(finish.values[1].let.at("uses_atomics").text() == "1");
  const parameter &warp = *f.find_parameter("warp");
  CHECK(warp.values[2].flag == "racy on Volta and later");
  CHECK(warp.values[0].flag.empty());
}

TEST_CASE("presets keep their values and notes", "[space]") {
  const family f = load_toy();
  REQUIRE(f.presets.size() == 1);
  CHECK(f.presets[0].name == "good");
  CHECK(f.presets[0].note == "a test preset");
  CHECK(f.presets[0].values.at("elements_per_thread") == value{std::int64_t{16}});
}

TEST_CASE("requires rdc and a dynamic shared memory expression are read", "[space]") {
  auto decl = toy_declaration();
  decl["requires"] = "rdc";
  decl["dynamic_shared_bytes"] = "block_size * sizeof_T";
  const family f = load_toy(decl);
  CHECK(f.requires_rdc);
  REQUIRE(f.dynamic_shared_bytes.has_value());
  CHECK(f.dynamic_shared_bytes->text() == "block_size * sizeof_T");
}

TEST_CASE("a family that is not in the library is named", "[space]") {
  const auto lib = rt_test::library_with(toy_declaration());
  CHECK(contains(config_error_of([&] { (void)family::load(lib, "nope"); }), "'nope'"));
}

TEST_CASE("every family of a library loads", "[space]") {
  auto lib = rt_test::library_with(toy_declaration());
  auto other = toy_declaration();
  other["family"] = "other";
  lib.put("other/family.json", other.dump());
  lib.put("other/toy.cuh", "");
  const auto all = family::load_all(lib);
  REQUIRE(all.size() == 2);
  CHECK(all[0].name == "other");
  CHECK(all[1].name == "toy");
}

TEST_CASE("bad declarations are rejected at load with the reason", "[space]") {
  auto decl = toy_declaration();

  SECTION("not JSON") {
    auto lib = rt_test::library_with(decl);
    lib.put("toy/family.json", "{ not json");
    CHECK(contains(config_error_of([&] { (void)family::load(lib, "toy"); }), "not valid JSON"));
  }
  SECTION("an unknown top-level key") {
    decl["kernals"] = nlohmann::json::object();
    CHECK(contains(load_error(decl), "unknown key \"kernals\""));
  }
  SECTION("an unknown parameter key") {
    decl["parameters"][0]["defualt"] = 256;
    CHECK(contains(load_error(decl), "unknown key \"defualt\""));
  }
  SECTION("a default that is not among the values") {
    decl["parameters"][0]["default"] = 100;
    const auto msg = load_error(decl);
    CHECK(contains(msg, "default 100 is not among its values"));
    CHECK(contains(msg, "'block_size'"));
  }
  SECTION("a parameter declared twice") {
    decl["parameters"].push_back(decl["parameters"][2]);
    CHECK(contains(load_error(decl), "'vec' is declared twice"));
  }
  SECTION("a value listed twice") {
    decl["parameters"][2]["values"] = {1, 2, 2};
    CHECK(contains(load_error(decl), "listed twice"));
  }
  SECTION("a parameter named like a built-in") {
    decl["parameters"][2]["name"] = "sizeof_T";
    CHECK(contains(load_error(decl), "built-in"));
  }
  SECTION("a kind that is neither compile nor launch") {
    decl["parameters"][2]["kind"] = "runtime";
    CHECK(contains(load_error(decl), "'runtime'"));
  }
  SECTION("a preset naming an unknown parameter") {
    decl["presets"][0]["values"]["blocksize"] = 128;
    CHECK(contains(load_error(decl), "unknown parameter 'blocksize'"));
  }
  SECTION("a preset naming an undeclared value") {
    decl["presets"][0]["values"]["warp"] = "ballot";
    CHECK(contains(load_error(decl), "'ballot' is not a value of 'warp'"));
  }
  SECTION("a preset declared twice") {
    decl["presets"].push_back(decl["presets"][0]);
    CHECK(contains(load_error(decl), "preset 'good' is declared twice"));
  }
  SECTION("a malformed constraint expression") {
    decl["constraints"][0]["expr"] = "vec * * 2";
    const auto msg = load_error(decl);
    CHECK(contains(msg, "constraint #1"));
    CHECK(contains(msg, "'vec * * 2'"));
  }
  SECTION("a constraint naming an unknown identifier") {
    decl["constraints"][0]["expr"] = "vecc <= 4";
    CHECK(contains(load_error(decl), "unknown identifier 'vecc'"));
  }
  SECTION("n outside the grid expression") {
    decl["shared_bytes"] = "n * 4";
    CHECK(contains(load_error(decl), "only in the grid"));
  }
  SECTION("a constraint without a reason") {
    decl["constraints"][0].erase("why");
    CHECK(contains(load_error(decl), "lacks \"why\""));
  }
  SECTION("a kernel pattern naming an unknown field") {
    decl["kernels"]["pass"] = "rt::toy::pass<{T}, {blok}>";
    CHECK(contains(load_error(decl), "{blok}"));
  }
  SECTION("a kernel pattern naming a launch parameter") {
    decl["kernels"]["pass"] = "rt::toy::pass<{T}, {cap}>";
    CHECK(contains(load_error(decl), "launch parameter"));
  }
  SECTION("an unbalanced kernel pattern") {
    decl["kernels"]["pass"] = "rt::toy::pass<{T, {Op}>";
    CHECK(contains(load_error(decl), "does not enclose a name"));
  }
  SECTION("string values without a cpp pattern in a kernel name") {
    decl["parameters"][1].erase("cpp");
    CHECK(contains(load_error(decl), "no \"cpp\" pattern"));
  }
  SECTION("a cpp pattern without {value}") {
    decl["parameters"][1]["cpp"] = "rt::warp_strategy::shuffle";
    CHECK(contains(load_error(decl), "lacks {value}"));
  }
  SECTION("no pass kernel") {
    decl["kernels"].erase("pass");
    CHECK(contains(load_error(decl), "\"pass\""));
  }
  SECTION("a family name that is not its folder") {
    decl["family"] = "toy2";
    CHECK(contains(load_error(decl), "folder is 'toy'"));
  }
  SECTION("a source that is not in the library") {
    decl["source"] = "missing.cuh";
    CHECK(contains(load_error(decl), "'missing.cuh'"));
  }
  SECTION("an include folder that is not in the library") {
    decl["includes"] = {"common", "nowhere"};
    CHECK(contains(load_error(decl), "'nowhere'"));
  }
  SECTION("a let binding that hides a parameter") {
    decl["parameters"][3]["values"][1]["let"]["vec"] = "4";
    CHECK(contains(load_error(decl), "hides a parameter"));
  }
  SECTION("a malformed let expression") {
    decl["parameters"][3]["values"][1]["let"]["uses_atomics"] = "1 +";
    CHECK(contains(load_error(decl), "let 'uses_atomics'"));
  }
  SECTION("a flag on an undeclared value") {
    decl["parameters"][1]["flags"]["ballot"] = "no such value";
    CHECK(contains(load_error(decl), "flags the value 'ballot'"));
  }
  SECTION("a string value that cannot appear in a label") {
    decl["parameters"][1]["values"][0] = "shuf.fle";
    CHECK(contains(load_error(decl), "only letters, digits and '_'"));
  }
  SECTION("an unknown requirement") {
    decl["requires"] = "mpi";
    CHECK(contains(load_error(decl), "unknown requirement"));
  }
  SECTION("two parameters with one label prefix") {
    decl["parameters"][2]["label"] = "bs";
    CHECK(contains(load_error(decl), "label 'bs'"));
  }
}

TEST_CASE("a test-only family declares the outcome it expects", "[space]") {
  auto decl = toy_declaration();
  decl["expected"] = "launch_error";
  CHECK(load_toy(decl).expected == "launch_error");
  CHECK(load_toy().expected.empty());
  decl["expected"] = "crash";
  CHECK(contains(load_error(decl), "\"expected\" is 'crash'"));
}
