#include "reducetune/space/launch_plan.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/space/name_table.hpp"

namespace reducetune {

namespace {
constexpr name_table<protocol, 5> protocol_names = {{{protocol::multipass, "multipass"},
                                                     {protocol::two_pass, "two_pass"},
                                                     {protocol::atomic, "atomic"},
                                                     {protocol::ticket, "ticket"},
                                                     {protocol::host, "host"}}};
} // namespace

const char *to_string(protocol p) noexcept {
  return name_of(protocol_names, p);
}

protocol protocol_from_string(const std::string &name) {
  if (const auto p = value_named(protocol_names, name))
    return *p;
  throw invalid_configuration("unknown protocol '" + name +
                              "' (valid: " + names_of(protocol_names) + ")");
}

} // namespace reducetune
