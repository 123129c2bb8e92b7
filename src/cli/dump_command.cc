// `elasticjob dump NAME --instance HOST:PORT`: asks an instance's dump port for a job's
// registry subtree as that instance sees it (docs/dump.md) and prints the reply.
#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/output.h"
#include "snapshot/snapshot_service.h"

namespace elasticjob::cli {
namespace {

struct DumpOptions {
  std::string job;
  std::string instance;
  int timeout_ms = 10000;
  bool json = false;
};

int RunDump(const DumpOptions& o) {
  const size_t colon = o.instance.rfind(':');
  int port = -1;
  if (colon != std::string::npos && colon > 0) {
    const char* b = o.instance.data() + colon + 1;
    const char* e = o.instance.data() + o.instance.size();
    auto [end, ec] = std::from_chars(b, e, port);
    if (ec != std::errc() || end != e || b == e) port = -1;
  }
  if (port < 1 || port > 65535) {
    std::cerr << fmt::format(
        "elasticjob: --instance: expected HOST:PORT (the instance's "
        "monitorPort), got '{}'\n",
        o.instance);
    return kExitBadInput;
  }
  if (o.timeout_ms < 1) {
    std::cerr << fmt::format("elasticjob: --timeout-ms: must be at least 1, got {}\n",
                             o.timeout_ms);
    return kExitBadInput;
  }
  std::string host = o.instance.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);  // [::1]:9888
  }
  auto reply = snapshot::RequestDump(host, port, o.job, std::chrono::milliseconds(o.timeout_ms));
  if (!reply.ok()) {
    std::cerr << "elasticjob: " << reply.status().message() << "\n";
    return kExitFailed;
  }
  if (reply->empty()) {
    std::cerr << fmt::format(
        "elasticjob: {} sent an empty reply: it serves no job '{}' on its dump port (or could "
        "not read its registry: see its log)\n",
        o.instance, o.job);
    return kExitFailed;
  }
  if (o.json) {
    PrintJson(std::cout, {{"job", o.job}, {"instance", o.instance}, {"dump", *reply}});
  } else {
    std::cout << *reply << std::flush;
  }
  return kExitOk;
}

}  // namespace

void AddDumpCommand(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<DumpOptions>();
  CLI::App* dump = app.add_subcommand(
      "dump", "Print a job's registry subtree as an instance sees it (its dump port)");
  dump->add_option("job", opts->job, "Job name")->required();
  dump->add_option("--instance", opts->instance,
                   "HOST:PORT of the instance's dump port (the job's monitorPort)")
      ->required();
  dump->add_option("--timeout-ms", opts->timeout_ms,
                   "Bound on connecting and receiving the reply (default 10000)");
  dump->add_flag("--json", opts->json, "One JSON object {job, instance, dump} instead of text");
  dump->callback([opts, exit_code] { *exit_code = RunDump(*opts); });
}

}  // namespace elasticjob::cli
