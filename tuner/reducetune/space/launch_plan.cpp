#include "reducetune/space/launch_plan.hpp"

#include "reducetune/errors.hpp"

namespace reducetune {

const char *to_string(protocol p) noexcept {
  switch (p) {
  case protocol::multipass:
    return "multipass";
  case protocol::two_pass:
    return "two_pass";
  case protocol::atomic:
    return "atomic";
  case protocol::ticket:
    return "ticket";
  case protocol::host:
    return "host";
  }
  return "?";
}

protocol protocol_from_string(const std::string &name) {
  for (protocol p : {protocol::multipass, protocol::two_pass, protocol::atomic, protocol::ticket,
                     protocol::host})
    if (name == to_string(p))
      return p;
  throw invalid_configuration("unknown protocol '" + name +
                              "' (valid: multipass, two_pass, atomic, ticket, host)");
}

} // namespace reducetune
