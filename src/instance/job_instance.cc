#include "instance/job_instance.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>

#include "config/yaml_node.h"
#include "config/yaml_scalar.h"
#include "infra/printable.h"

namespace elasticjob::instance {
namespace {

bool IsIpv4(std::string_view s) {
  in_addr a{};
  return inet_pton(AF_INET, std::string(s).c_str(), &a) == 1;
}

bool SiteLocal(uint32_t host_order) {
  return (host_order >> 24) == 10 || (host_order >> 20) == ((172u << 4) | 1u) ||
         (host_order >> 16) == ((192u << 8) | 168u);
}

}  // namespace

JobInstance JobInstance::For(std::string ip, long pid) {
  return JobInstance{fmt::format("{}{}{}", ip, kDelimiter, pid), ip};
}

std::string JobInstance::ToYaml() const {
  config::YamlWriter w;
  w.StringEntry(0, "jobInstanceId", instance_id);
  w.StringEntry(0, "serverIp", server_ip);
  return w.str();
}

Result<JobInstance> JobInstance::FromYaml(std::string_view yaml) {
  auto loaded = config::LoadYaml(yaml);
  if (!loaded.ok()) return loaded.status().WithContext("instance");
  const YAML::Node id = config::YamlChild(*loaded, "jobInstanceId");
  const YAML::Node ip = config::YamlChild(*loaded, "serverIp");
  if (!id.IsScalar()) {
    return InvalidArgument(
        fmt::format("instance: jobInstanceId missing in '{}'", infra::Printable(yaml, 200)));
  }
  JobInstance i;
  i.instance_id = id.Scalar();
  if (ip.IsScalar()) {
    i.server_ip = ip.Scalar();
  } else {
    i.server_ip = i.instance_id.substr(0, i.instance_id.find(kDelimiter));
  }
  return i;
}

Result<std::string> DetectIp(std::string_view configured) {
  if (!configured.empty()) {
    if (!IsIpv4(configured)) {
      return InvalidArgument(fmt::format("serverIp: '{}' is not an IPv4 address", configured));
    }
    return std::string(configured);
  }
  if (const char* ip = std::getenv("ELASTICJOB_PREFERRED_NETWORK_IP"); ip != nullptr && *ip) {
    if (!IsIpv4(ip)) {
      return InvalidArgument(
          fmt::format("ELASTICJOB_PREFERRED_NETWORK_IP: '{}' is not an IPv4 address", ip));
    }
    return std::string(ip);
  }
  const char* wanted = std::getenv("ELASTICJOB_PREFERRED_NETWORK_INTERFACE");
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::string("127.0.0.1");
  std::string public_ip, local_ip, interface_ip;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    auto* sin = reinterpret_cast<sockaddr_in*>(i->ifa_addr);
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf);
    uint32_t host = ntohl(sin->sin_addr.s_addr);
    if (wanted != nullptr && *wanted && interface_ip.empty() &&
        std::string_view(i->ifa_name) == wanted) {
      interface_ip = buf;
    }
    if ((i->ifa_flags & IFF_LOOPBACK) != 0 || (host >> 24) == 127) continue;
    if (SiteLocal(host)) {
      local_ip = buf;  // ElasticJob keeps the last site-local address
    } else if (public_ip.empty()) {
      public_ip = buf;
    }
  }
  freeifaddrs(list);
  if (wanted != nullptr && *wanted) {
    if (interface_ip.empty()) {
      return InvalidArgument(fmt::format(
          "ELASTICJOB_PREFERRED_NETWORK_INTERFACE: no IPv4 address on interface '{}'", wanted));
    }
    return interface_ip;
  }
  if (!public_ip.empty()) return public_ip;
  if (!local_ip.empty()) return local_ip;
  return std::string("127.0.0.1");
}

}  // namespace elasticjob::instance
