#include "cli/registry_option.h"

#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/observability.h"
#include "infra/printable.h"
#include "reg/registry_url.h"

namespace elasticjob::cli {

void AddRegistryOption(CLI::App& command, std::string* url) {
  command
      .add_option("--registry", *url,
                  "Registry URL (zookeeper://host:port/namespace); default: $ELASTICJOB_REGISTRY")
      ->envname("ELASTICJOB_REGISTRY");
}

std::unique_ptr<RegistryCenter> ConnectRegistry(std::string url, int* exit_code) {
  if (url.empty()) {
    SayError("no registry: give --registry URL or set ELASTICJOB_REGISTRY");
    *exit_code = kExitBadInput;
    return nullptr;
  }
  if (url.rfind("zookeeper://", 0) == 0 && url.find("connectionTimeoutMs=") == std::string::npos) {
    url += fmt::format("{}connectionTimeoutMs={}", url.find('?') == std::string::npos ? '?' : '&',
                       kConnectSeconds * 1000);
  }
  auto registry = NewRegistryCenter(url);
  if (!registry.ok()) {
    SayError("--registry: " + infra::OneLine(registry.status().message()));
    *exit_code = kExitBadInput;
    return nullptr;
  }
  if (Status s = (*registry)->Init(); !s.ok()) {
    SayError("registry " + reg::RedactRegistryUrl(url) + ": " + s.message());
    *exit_code = kExitFailed;
    return nullptr;
  }
  return std::move(registry).value();
}

int ReportFailure(const Status& status) {
  std::cerr << "elasticjob: " << infra::OneLine(status.message()) << "\n";
  return status.code() == StatusCode::kInvalidArgument ? kExitBadInput : kExitFailed;
}

}  // namespace elasticjob::cli
