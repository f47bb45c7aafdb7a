#include "reducetune/space/family.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/templates/template_library.hpp"

namespace reducetune {

std::optional<std::size_t> parameter::index_of(const value &v) const {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i].v == v)
      return i;
  return std::nullopt;
}

std::string parameter::cpp_spelling(const value &v) const {
  const std::string text = to_string(v);
  if (cpp.empty())
    return text;
  std::string out = cpp;
  for (std::size_t at = out.find("{value}"); at != std::string::npos;
       at = out.find("{value}", at + text.size()))
    out.replace(at, 7, text);
  return out;
}

std::string parameter::values_text() const {
  std::string out;
  for (const auto &pv : values)
    out += (out.empty() ? "" : ", ") + to_string(pv.v);
  return out;
}

family family::load(const template_library &lib, const std::string &name) {
  const std::string path = name + "/family.json";
  const auto text = lib.read(path);
  if (!text)
    throw invalid_configuration("no template family '" + name + "': " + path +
                                " is not in the template library (" + lib.origin() + ")");
  return from_json(name, *text, &lib);
}

std::vector<family> family::load_all(const template_library &lib) {
  std::vector<family> out;
  for (const auto &name : lib.families())
    out.push_back(load(lib, name));
  return out;
}

const parameter *family::find_parameter(const std::string &param_name) const {
  for (const auto &p : parameters)
    if (p.name == param_name)
      return &p;
  return nullptr;
}

namespace {
// The positions of the parameters of one kind, in declaration order.
std::vector<std::size_t> positions_of(const std::vector<parameter> &ps, parameter_kind kind) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < ps.size(); ++i)
    if (ps[i].kind == kind)
      out.push_back(i);
  return out;
}
} // namespace

std::vector<std::size_t> family::compile_parameters() const {
  return positions_of(parameters, parameter_kind::compile);
}

std::vector<std::size_t> family::launch_parameters() const {
  return positions_of(parameters, parameter_kind::launch);
}

} // namespace reducetune
