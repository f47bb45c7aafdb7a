#include "reducetune/jit/variant_request.hpp"

#include "reducetune/space/name_pattern.hpp"

namespace reducetune {

std::string arch_name(int arch) { return "sm_" + std::to_string(arch); }

compile_request request_for(const family &f, const variant &v, int arch) {
  compile_request r;
  r.source_path = f.name + "/" + f.source;
  for (const auto &[role, expr] : kernel_names(f, v))
    r.name_expressions.push_back(expr);
  r.arch = arch_name(arch);
  r.rdc = f.requires_rdc;
  r.include_folders = f.includes;
  return r;
}

} // namespace reducetune
