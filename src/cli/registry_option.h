// The `--registry URL` option every operation command takes (else ELASTICJOB_REGISTRY), and
// the bounded connection they open with it: a registry that is down fails the command within
// kConnectSeconds with the reason, not after ZooKeeper's default of 15 s of retries.
//
// Thread safety: stateless functions.
#ifndef ELASTICJOB_CLI_REGISTRY_OPTION_H_
#define ELASTICJOB_CLI_REGISTRY_OPTION_H_

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "elasticjob/reg/registry_center.h"

namespace elasticjob::cli {

inline constexpr int kConnectSeconds = 5;

// Adds `--registry` (with ELASTICJOB_REGISTRY as its fallback) bound to `*url`.
void AddRegistryOption(CLI::App& command, std::string* url);

// Connects to `url`. On failure prints "elasticjob: ..." to stderr and sets `*exit_code`:
// 2 for a missing or malformed URL, 1 for a registry that cannot be reached (within
// kConnectSeconds unless the URL sets connectionTimeoutMs).
std::unique_ptr<RegistryCenter> ConnectRegistry(std::string url, int* exit_code);

// The exit code for a failed operation: 2 for INVALID_ARGUMENT (a bad name or item), else 1.
// Prints "elasticjob: <message>" to stderr, its control characters and bytes that are not
// UTF-8 escaped as \xNN (infra::Printable).
int ReportFailure(const Status& status);

}  // namespace elasticjob::cli

#endif  // ELASTICJOB_CLI_REGISTRY_OPTION_H_
