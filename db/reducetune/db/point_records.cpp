#include "reducetune/db/point_records.hpp"

#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "reducetune/errors.hpp"
#include "reducetune/templates/template_library.hpp"

namespace reducetune::db {
namespace {

using ordered_json = nlohmann::ordered_json;

ordered_json json_of(const value &v) {
  return is_int(v) ? ordered_json(std::get<std::int64_t>(v)) : ordered_json(std::get<std::string>(v));
}

std::string parameters_json(const family &f, const std::vector<std::size_t> &params,
                            const std::vector<value> &values) {
  ordered_json out = ordered_json::object();
  for (std::size_t k = 0; k < params.size() && k < values.size(); ++k)
    out[f.parameters[params[k]].name] = json_of(values[k]);
  return out.dump();
}

std::string flags_json(const std::vector<point_flag> &flags) {
  ordered_json out = ordered_json::array();
  for (const auto &f : flags)
    out.push_back({{"parameter", f.parameter}, {"value", f.value}, {"why", f.why}});
  return out.dump();
}

// Spaces by (family, dtype, op), built once per repair; nullptr when the family is unknown.
class space_cache {
public:
  explicit space_cache(const template_library &lib) : m_lib(lib) {}
  const search_space *get(const std::string &family_name, const std::string &dtype,
                          const std::string &op, std::string &why) {
    const auto key = family_name + "." + dtype + "." + op;
    auto it = m_spaces.find(key);
    if (it == m_spaces.end()) {
      std::unique_ptr<search_space> s;
      try {
        s = std::make_unique<search_space>(family::load(m_lib, family_name),
                                           dtype_from_string(dtype), op_from_string(op),
                                           device_limits{});
      } catch (const error &e) {
        m_why[key] = e.what();
      }
      it = m_spaces.emplace(key, std::move(s)).first;
    }
    why = m_why[key];
    return it->second.get();
  }

private:
  const template_library &m_lib;
  std::map<std::string, std::unique_ptr<search_space>> m_spaces;
  std::map<std::string, std::string> m_why;
};

void repair_variants(database &db, space_cache &spaces) {
  auto read = db.prepare("SELECT id, family, dtype, op, label FROM rt_variants");
  auto write = db.prepare(
      "UPDATE rt_variants SET parameters = ?2, flags = ?3, determinism = ?4 WHERE id = ?1");
  while (read.step()) {
    variant_record r{read.column_int(0), read.column_text(1), read.column_text(2),
                     read.column_text(3), read.column_text(4)};
    std::string why;
    try {
      const search_space *s = spaces.get(r.family, r.dtype, r.op, why);
      if (s == nullptr)
        throw invalid_configuration(why);
      const point p{parse_variant_label(s->decl(), r.label), default_launch_config(s->decl())};
      r = variant_record_of(*s, p);
      r.id = read.column_int(0);
    } catch (const error &e) {
      r.parameters_json = "{}";
      r.flags_json = flags_json({{"", "", std::string("unknown: ") + e.what()}});
      r.determinism = "unknown";
    }
    write.bind(1, r.id).bind(2, r.parameters_json).bind(3, r.flags_json).bind(4, r.determinism);
    write.run();
    write.reset();
  }
}

void repair_launches(database &db, space_cache &spaces) {
  auto read = db.prepare("SELECT m.id, v.family, v.dtype, v.op, m.launch_label"
                         " FROM rt_measurements m JOIN rt_variants v ON v.id = m.variant_id");
  auto write = db.prepare("UPDATE rt_measurements SET launch_parameters = ?2 WHERE id = ?1");
  while (read.step()) {
    std::string json = "{}";
    std::string why;
    if (const search_space *s =
            spaces.get(read.column_text(1), read.column_text(2), read.column_text(3), why)) {
      try {
        const launch_config c = parse_launch_label(s->decl(), read.column_text(4));
        json = parameters_json(s->decl(), s->decl().launch_parameters(), c.values);
      } catch (const error &) {
        // a launch label this family no longer reads: no parameters (the variant says why)
      }
    }
    write.bind(1, read.column_int(0)).bind(2, json);
    write.run();
    write.reset();
  }
}

} // namespace

variant_record variant_record_of(const search_space &s, const point &p) {
  const family &f = s.decl();
  variant_record r;
  r.family = f.name;
  r.dtype = to_string(p.compile.type);
  r.op = to_string(p.compile.op);
  r.label = variant_label(f, p);
  r.parameters_json = parameters_json(f, f.compile_parameters(), p.compile.values);
  r.flags_json = flags_json(s.flags(p));
  r.determinism = to_string(s.determinism_of(p));
  return r;
}

std::string launch_parameters_json(const search_space &s, const point &p) {
  return parameters_json(s.decl(), s.decl().launch_parameters(), p.launch.values);
}

point stored_point(const search_space &s, const std::string &variant_label,
                   const std::string &launch_label) {
  return s.parse(variant_label, launch_label);
}

void repair_points(database &db, const template_library &lib) {
  space_cache spaces(lib);
  repair_variants(db, spaces);
  repair_launches(db, spaces);
}

} // namespace reducetune::db
