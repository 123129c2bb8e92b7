// ListenAddress: "host:port" or "[v6]:port" as the servers' options take them (the console's
// --listen, the metrics' --metrics), parsed with errors naming the option and the value.
#ifndef ELASTICJOB_INFRA_LISTEN_ADDRESS_H_
#define ELASTICJOB_INFRA_LISTEN_ADDRESS_H_

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "elasticjob/status.h"

namespace elasticjob::infra {

struct ListenAddress {
  std::string host;
  int port = 0;
};

// INVALID_ARGUMENT "`option` 'value': why" for anything but host:port with a port 0..65535.
inline Result<ListenAddress> ParseListen(const std::string& listen, std::string_view option) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument(fmt::format("{} '{}': {}", option, listen, why));
  };
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return bad("expected host:port");
  ListenAddress a;
  a.host = listen.substr(0, colon);
  if (a.host.size() >= 2 && a.host.front() == '[' && a.host.back() == ']') {
    a.host = a.host.substr(1, a.host.size() - 2);
  }
  if (a.host.empty()) return bad("expected a host before ':'");
  try {
    size_t used = 0;
    a.port = std::stoi(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1 || a.port < 0 || a.port > 65535) throw 0;
  } catch (...) {
    return bad("expected a port from 0 to 65535");
  }
  return a;
}

}  // namespace elasticjob::infra

#endif  // ELASTICJOB_INFRA_LISTEN_ADDRESS_H_
