// `elasticjob job ...` and `elasticjob server ...`: the lifecycle API on the command line
// (docs/operations.md). Tables for people, --json for scripts; exit 0 done, 1 the operation
// failed (no such job or server, registry unreachable, a config file refused), 2 bad usage.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/registry_option.h"
#include "cli/run_file.h"
#include "elasticjob/lifecycle/job_configuration_api.h"
#include "elasticjob/lifecycle/job_operate_api.h"
#include "elasticjob/lifecycle/statistics_api.h"
#include "elasticjob/schedule/time_zone.h"
#include "infra/printable.h"

namespace elasticjob::cli {
namespace {

struct OpOptions {
  std::string registry;
  bool json = false;
  std::string job;
  std::string server;
  std::string file;
  std::string param;
  bool has_param = false;
  std::string at;    // trigger --at, as typed (ISO-8601)
  std::string item;  // as typed: checked against the job's items
  // --wait[=SECONDS] as typed; empty: not given (docs/operations.md).
  std::string wait;
  bool wait_for_owners = false;  // --wait also waits for every item to have an owner
};

constexpr int kDefaultWaitSeconds = 10;
constexpr int kMaxWaitSeconds = 3600;

// The job is there to read: its configuration registered, an instance online, and (for
// `sharding`, `items_owned`) every item assigned to an instance.
bool JobIsReady(RegistryCenter& reg, const OpOptions& o, bool items_owned) {
  auto brief = NewJobStatisticsAPI(reg)->GetJobBriefInfo(o.job);
  if (!brief.ok() || brief->instance_count <= 0) return false;
  if (!items_owned) return true;
  auto items = NewShardingStatisticsAPI(reg)->GetShardingInfo(o.job);
  if (!items.ok() || static_cast<int>(items->size()) < brief->sharding_total_count) return false;
  return std::all_of(items->begin(), items->end(),
                     [](const ShardingInfo& i) { return !i.instance_id.empty(); });
}

// --wait[=SECONDS]: polls until JobIsReady or the seconds pass (then the command runs and
// says what it finds: "not found", items without an owner). INVALID_ARGUMENT for a value
// that is not a whole number of seconds in 0..kMaxWaitSeconds.
Status WaitForJob(RegistryCenter& reg, const OpOptions& o) {
  int seconds = -1;
  auto [end, ec] = std::from_chars(o.wait.data(), o.wait.data() + o.wait.size(), seconds);
  if (ec != std::errc() || end != o.wait.data() + o.wait.size() || seconds < 0 ||
      seconds > kMaxWaitSeconds) {
    return InvalidArgument(fmt::format("--wait: '{}' is not a number of seconds (0 to {})",
                                       infra::Printable(o.wait, 100), kMaxWaitSeconds));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!JobIsReady(reg, o, o.wait_for_owners)) {
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Status::Ok();
}

// A leaf command: registers --registry and --json, connects, runs `body`, closes.
using Body = std::function<int(RegistryCenter&, const OpOptions&)>;
CLI::App* Leaf(CLI::App& parent, const char* name, const char* help,
               std::shared_ptr<OpOptions> opts, int* exit_code, Body body) {
  CLI::App* cmd = parent.add_subcommand(name, help);
  AddRegistryOption(*cmd, &opts->registry);
  cmd->add_flag("--json", opts->json, "Print JSON for scripts instead of a table");
  cmd->callback([opts, exit_code, body = std::move(body)] {
    auto registry = ConnectRegistry(opts->registry, exit_code);
    if (registry == nullptr) return;
    if (!opts->wait.empty()) {
      if (Status s = WaitForJob(*registry, *opts); !s.ok()) {
        *exit_code = ReportFailure(s);
        registry->Close();
        return;
      }
    }
    *exit_code = body(*registry, *opts);
    registry->Close();
  });
  return cmd;
}

void AddJobArg(CLI::App* cmd, OpOptions* opts) {
  cmd->add_option("job", opts->job, "Job name")->required();
}
// --wait[=SECONDS] of the commands that read a job (show, sharding, config get).
void AddWaitOption(CLI::App* cmd, OpOptions* opts, bool for_owners) {
  opts->wait_for_owners = for_owners;
  cmd->add_option("--wait", opts->wait,
                  fmt::format("Wait until the job has an instance online{} (at most SECONDS, "
                              "default {}; 0..{}), e.g. right after starting it",
                              for_owners ? " and every item an owner" : "", kDefaultWaitSeconds,
                              kMaxWaitSeconds))
      ->expected(0, 1)
      ->default_str(std::to_string(kDefaultWaitSeconds))
      ->type_name("SECONDS");
}
void AddServerFlag(CLI::App* cmd, OpOptions* opts) {
  cmd->add_option("--server", opts->server, "Only this server IP (default: every server)");
}

// Prints `table` (or its JSON) and returns 0.
int Print(const Table& table, const OpOptions& o) {
  if (o.json) {
    PrintJson(std::cout, table.ToJson());
  } else {
    table.Print(std::cout);
  }
  return kExitOk;
}

// Prints what an operation did: `message` for people, `json` for scripts.
int Done(const OpOptions& o, const std::string& message, nlohmann::json json) {
  if (o.json) {
    PrintJson(std::cout, json);
  } else {
    std::cout << message << "\n";
  }
  return kExitOk;
}

Result<std::string> ReadFile(const std::string& path) {
  constexpr std::streamsize kMaxFileBytes = 1 << 20;
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) return InvalidArgument(fmt::format("{}: cannot be read", path));
  std::string text(kMaxFileBytes + 1, '\0');
  in.read(text.data(), kMaxFileBytes + 1);
  if (in.bad()) return InvalidArgument(fmt::format("{}: cannot be read", path));
  if (in.gcount() > kMaxFileBytes) {
    return InvalidArgument(fmt::format("{}: larger than 1 MiB, not a job file", path));
  }
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

std::string Iso(std::chrono::system_clock::time_point t, const TimeZone& zone) {
  return zone.FormatIso8601(t);
}

int List(RegistryCenter& reg, const OpOptions& o) {
  auto jobs = NewJobStatisticsAPI(reg)->GetAllJobsBriefInfo();
  if (!jobs.ok()) return ReportFailure(jobs.status());
  using K = Table::Kind;
  Table t({"JOB", "STATUS", "CRON", "INSTANCES", "ITEMS", "DESCRIPTION"},
          {K::kText, K::kText, K::kText, K::kNumber, K::kNumber, K::kText});
  for (const auto& j : *jobs) {
    t.AddRow({j.job_name, JobStatusName(j.status), j.cron, std::to_string(j.instance_count),
              std::to_string(j.sharding_total_count), j.description});
  }
  return Print(t, o);
}

Table ShardingTable(const std::vector<ShardingInfo>& items) {
  using K = Table::Kind;
  Table t({"ITEM", "STATUS", "INSTANCE", "SERVER", "FAILOVER"},
          {K::kNumber, K::kText, K::kText, K::kText, K::kBool});
  for (const auto& i : items) {
    t.AddRow({std::to_string(i.item), ShardingStatusName(i.status), i.instance_id, i.server_ip,
              i.failover ? "yes" : "no"});
  }
  return t;
}

int Show(RegistryCenter& reg, const OpOptions& o) {
  auto stats = NewJobStatisticsAPI(reg);
  auto brief = stats->GetJobBriefInfo(o.job);
  if (!brief.ok()) return ReportFailure(brief.status());
  auto config = NewJobConfigurationAPI(reg)->GetJobConfiguration(o.job);
  if (!config.ok()) return ReportFailure(config.status());
  auto type = reg.GetDirectly("/" + o.job);
  auto items = NewShardingStatisticsAPI(reg)->GetShardingInfo(o.job);
  if (!items.ok()) return ReportFailure(items.status());
  auto next = stats->GetNextFireTimes(o.job, 3, std::chrono::system_clock::now());
  auto zone = config->time_zone ? TimeZone::Parse(*config->time_zone)
                                : Result<TimeZone>(TimeZone::SystemDefault());
  std::vector<std::string> times;
  if (next.ok() && zone.ok()) {
    for (auto t : *next) times.push_back(Iso(t, *zone));
  }
  const Table sharding = ShardingTable(*items);
  if (o.json) {
    nlohmann::json j = {{"job", o.job},
                        {"type", type.ok() ? *type : ""},
                        {"status", JobStatusName(brief->status)},
                        {"cron", brief->cron},
                        {"time_zone", config->time_zone.value_or("")},
                        {"items", brief->sharding_total_count},
                        {"instances", brief->instance_count},
                        {"description", brief->description},
                        {"label", config->label.value_or("")},
                        {"next_fire_times", times},
                        {"sharding", sharding.ToJson()}};
    PrintJson(std::cout, j);
    return kExitOk;
  }
  Table t({"FIELD", "VALUE"});
  t.AddRow({"job", o.job});
  t.AddRow({"type", type.ok() ? *type : ""});
  t.AddRow({"status", JobStatusName(brief->status)});
  t.AddRow({"cron", brief->cron});
  t.AddRow({"timeZone", config->time_zone.value_or("(system)")});
  t.AddRow({"items", std::to_string(brief->sharding_total_count)});
  t.AddRow({"instances", std::to_string(brief->instance_count)});
  t.AddRow({"description", brief->description});
  if (config->label) t.AddRow({"label", *config->label});
  for (size_t i = 0; i < times.size(); ++i) {
    t.AddRow({i == 0 ? "next fire times" : "", times[i]});
  }
  t.Print(std::cout);
  std::cout << "\n";
  sharding.Print(std::cout);
  return kExitOk;
}

int Trigger(RegistryCenter& reg, const OpOptions& o) {
  std::optional<std::string> param;
  if (o.has_param) param = o.param;
  if (!o.at.empty()) {
    auto at = TimeZone::SystemDefault().ParseIso8601(o.at);
    if (!at.ok()) return ReportFailure(at.status().WithContext("--at"));
    auto name = NewJobOperateAPI(reg)->TriggerAt(o.job, *at, param);
    if (!name.ok()) return ReportFailure(name.status());
    return Done(o,
                fmt::format("job '{}': one run scheduled at {} (triggerAt/{})", o.job, o.at, *name),
                {{"job", o.job}, {"node", *name}});
  }
  auto n = NewJobOperateAPI(reg)->Trigger(o.job, o.server, param);
  if (!n.ok()) return ReportFailure(n.status());
  return Done(o, fmt::format("job '{}' triggered on {} instance(s)", o.job, *n),
              {{"job", o.job}, {"instances", *n}});
}

int Stop(RegistryCenter& reg, const OpOptions& o) {
  std::optional<int> item;
  if (!o.item.empty()) {
    int n = -1;
    auto [end, ec] = std::from_chars(o.item.data(), o.item.data() + o.item.size(), n);
    if (ec != std::errc() || end != o.item.data() + o.item.size() || n < 0) {
      return ReportFailure(
          InvalidArgument(fmt::format("--item: expected an item number, got '{}'", o.item)));
    }
    item = n;
  }
  auto n = NewJobOperateAPI(reg)->Stop(o.job, o.server, item);
  if (!n.ok()) return ReportFailure(n.status());
  return Done(o,
              fmt::format("job '{}': stop of {} sent to {} instance(s)", o.job,
                          item ? fmt::format("item {}", *item) : "its running items", *n),
              {{"job", o.job}, {"instances", *n}});
}

// disable / enable / shutdown of a job (all servers or --server) or of a server (all jobs).
int ServerOp(RegistryCenter& reg, const OpOptions& o, const std::string& verb) {
  auto ops = NewJobOperateAPI(reg);
  Result<int> n = verb == "disabled"  ? ops->Disable(o.job, o.server)
                  : verb == "enabled" ? ops->Enable(o.job, o.server)
                                      : ops->Shutdown(o.job, o.server);
  if (!n.ok()) return ReportFailure(n.status());
  std::string what = o.job.empty()      ? fmt::format("server '{}'", o.server)
                     : o.server.empty() ? fmt::format("job '{}'", o.job)
                                        : fmt::format("job '{}' on server '{}'", o.job, o.server);
  std::string unit = verb == "shut down" ? "instance(s)" : "server node(s)";
  return Done(o, fmt::format("{} {} ({} {})", what, verb, *n, unit),
              {{"job", o.job}, {"server", o.server}, {"changed", *n}});
}

int Remove(RegistryCenter& reg, const OpOptions& o) {
  if (Status s = NewJobConfigurationAPI(reg)->RemoveJobConfiguration(o.job); !s.ok()) {
    return ReportFailure(s);
  }
  return Done(o, fmt::format("job '{}' removed", o.job), {{"job", o.job}, {"removed", true}});
}

int ConfigGet(RegistryCenter& reg, const OpOptions& o) {
  auto config = NewJobConfigurationAPI(reg)->GetJobConfiguration(o.job);
  if (!config.ok()) return ReportFailure(config.status());
  const std::string yaml = ConfigToYaml(*config);
  if (o.json) {
    PrintJson(std::cout, {{"job", o.job}, {"config", yaml}});
  } else {
    std::cout << yaml;
  }
  return kExitOk;
}

// A file the operator wrote was refused: exit 1 (the operation failed), the reason named.
// The message escaped: a binary file's bytes show as \xNN.
int Refused(const std::string& file, const Status& s) {
  std::cerr << "elasticjob: " << infra::OneLine(file + ": " + s.message()) << "\n";
  return kExitFailed;
}

int ConfigSet(RegistryCenter& reg, const OpOptions& o) {
  auto text = ReadFile(o.file);
  if (!text.ok()) return Refused(o.file, text.status());
  auto config = ConfigFromYaml(*text);
  if (!config.ok()) return Refused(o.file, config.status());
  if (config->job_name.empty()) config->job_name = o.job;
  if (config->job_name != o.job) {
    return Refused(o.file, InvalidArgument(fmt::format("jobName '{}' is not job '{}'",
                                                       config->job_name, o.job)));
  }
  Status s = NewJobConfigurationAPI(reg)->UpdateJobConfiguration(*config);
  if (s.code() == StatusCode::kInvalidArgument) return Refused(o.file, s);
  if (!s.ok()) return ReportFailure(s);
  return Done(o, fmt::format("job '{}': configuration updated", o.job),
              {{"job", o.job}, {"updated", true}});
}

int Add(RegistryCenter& reg, const OpOptions& o) {
  auto text = ReadFile(o.file);
  if (!text.ok()) return Refused(o.file, text.status());
  std::vector<std::string> warnings;
  // The registry is --registry's: the file's regCenter, if any, is not used.
  auto file = ParseRunFile(*text, "unused://", &warnings);
  for (const std::string& w : warnings) std::cerr << "elasticjob: warning: " << w << "\n";
  if (!file.ok()) return Refused(o.file, file.status());
  auto api = NewJobConfigurationAPI(reg);
  nlohmann::json added = nlohmann::json::array();
  for (const RunJobSpec& spec : file->jobs) {
    if (Status s = api->AddJob(spec.config, spec.type); !s.ok()) {
      if (!o.json) std::cout << std::flush;
      // A job the file describes is refused (a name no instance can run): as config set.
      if (s.code() == StatusCode::kInvalidArgument) return Refused(o.file, s);
      return ReportFailure(s);
    }
    if (!o.json) {
      std::cout << fmt::format("job '{}' added ({}, {})\n", spec.config.job_name, spec.type,
                               ScheduleWords(spec.config));
    }
    added.push_back({{"job", spec.config.job_name}, {"type", spec.type}});
  }
  if (o.json) PrintJson(std::cout, added);
  return kExitOk;
}

int Sharding(RegistryCenter& reg, const OpOptions& o) {
  auto items = NewShardingStatisticsAPI(reg)->GetShardingInfo(o.job);
  if (!items.ok()) return ReportFailure(items.status());
  return Print(ShardingTable(*items), o);
}

int Item(RegistryCenter& reg, const OpOptions& o, bool disable) {
  int item = -1;
  auto [end, ec] = std::from_chars(o.item.data(), o.item.data() + o.item.size(), item);
  if (ec != std::errc() || end != o.item.data() + o.item.size()) {
    // Not a number (or beyond int): name it and the job's items.
    auto config = NewJobConfigurationAPI(reg)->GetJobConfiguration(o.job);
    if (!config.ok()) return ReportFailure(config.status());
    return ReportFailure(
        InvalidArgument(fmt::format("item '{}': not an item number; job '{}' has items 0 to {}",
                                    o.item, o.job, config->sharding_total_count - 1)));
  }
  auto api = NewShardingOperateAPI(reg);  // checks the range: 0 to shardingTotalCount-1
  Status s = disable ? api->Disable(o.job, item) : api->Enable(o.job, item);
  if (!s.ok()) return ReportFailure(s);
  return Done(o, fmt::format("job '{}' item {} {}", o.job, item, disable ? "disabled" : "enabled"),
              {{"job", o.job}, {"item", item}, {"disabled", disable}});
}

int ServerList(RegistryCenter& reg, const OpOptions& o) {
  auto servers = NewServerStatisticsAPI(reg)->GetAllServersBriefInfo();
  if (!servers.ok()) return ReportFailure(servers.status());
  using K = Table::Kind;
  Table t({"SERVER", "INSTANCES", "JOBS", "DISABLED_JOBS"},
          {K::kText, K::kNumber, K::kNumber, K::kNumber});
  for (const auto& s : *servers) {
    t.AddRow({s.server_ip, std::to_string(s.instances.size()), std::to_string(s.job_names.size()),
              std::to_string(s.disabled_jobs)});
  }
  return Print(t, o);
}

}  // namespace

void AddJobCommand(CLI::App& app, int* exit_code) {
  CLI::App* job = app.add_subcommand("job", "Operate the jobs of a namespace (docs/operations.md)");
  job->require_subcommand(1);
  auto leaf = [&](CLI::App& parent, const char* name, const char* help, Body body) {
    auto opts = std::make_shared<OpOptions>();
    CLI::App* cmd = Leaf(parent, name, help, opts, exit_code, std::move(body));
    return std::make_pair(cmd, opts.get());
  };
  leaf(*job, "list",
       "Every job: status, schedule (cron, fixedRate or fixedDelay), instances, items", List);
  {
    auto [cmd, o] = leaf(*job, "show", "One job: configuration, next fire times, items", Show);
    AddJobArg(cmd, o);
    AddWaitOption(cmd, o, /*for_owners=*/false);
  }
  {
    auto [cmd, o] = leaf(*job, "trigger", "Run a job now on every live instance", Trigger);
    AddJobArg(cmd, o);
    AddServerFlag(cmd, o);
    cmd->add_option("--param", o->param, "Job parameter for this run only")
        ->each([o = o](const std::string&) { o->has_param = true; });
    cmd->add_option("--at", o->at,
                    "Run once at this time instead of now (ISO-8601, e.g. "
                    "2026-12-01T03:00:00+08:00), kept in the registry until it runs "
                    "(docs/scheduling.md)");
  }
  {
    auto [cmd, o] = leaf(*job, "stop",
                         "Cancel what a job runs now (all items, or --item, on every instance or "
                         "--server), as a timeout does; the job stays enabled (docs/scheduling.md)",
                         Stop);
    AddJobArg(cmd, o);
    AddServerFlag(cmd, o);
    cmd->add_option("--item", o->item, "Only this item (the runs' other items go on)");
  }
  for (const char* verb : {"disable", "enable", "shutdown"}) {
    const std::string past = std::string(verb) == "disable"  ? "disabled"
                             : std::string(verb) == "enable" ? "enabled"
                                                             : "shut down";
    auto [cmd, o] = leaf(
        *job, verb,
        std::string(verb) == "shutdown" ? "Stop a job's instances (all, or on --server)"
                                        : "Disable or enable a job's servers (all, or --server)",
        [past](RegistryCenter& r, const OpOptions& op) { return ServerOp(r, op, past); });
    AddJobArg(cmd, o);
    AddServerFlag(cmd, o);
  }
  {
    auto [cmd, o] = leaf(*job, "remove", "Remove a job: its instances stop, its nodes go", Remove);
    AddJobArg(cmd, o);
  }
  CLI::App* config = job->add_subcommand("config", "A job's configuration");
  config->require_subcommand(1);
  {
    auto [cmd, o] = leaf(*config, "get", "Print a job's configuration YAML", ConfigGet);
    AddJobArg(cmd, o);
    AddWaitOption(cmd, o, /*for_owners=*/false);
  }
  {
    auto [cmd, o] = leaf(*config, "set",
                         "Replace a job's configuration (validated; running instances "
                         "reschedule)",
                         ConfigSet);
    AddJobArg(cmd, o);
    cmd->add_option("file", o->file, "Configuration YAML (as `config get` prints it)")->required();
  }
  {
    auto [cmd, o] = leaf(*job, "add",
                         "Add the jobs a YAML file declares (`elasticjob run`'s "
                         "format); agents start them",
                         Add);
    cmd->add_option("file", o->file, "YAML file (ElasticJob Spring Boot property names)")
        ->required();
  }
  {
    auto [cmd, o] = leaf(*job, "sharding", "A job's items: owner, status, failover", Sharding);
    AddJobArg(cmd, o);
    AddWaitOption(cmd, o, /*for_owners=*/true);
  }
  CLI::App* item = job->add_subcommand("item", "Disable or enable one item of a job");
  item->require_subcommand(1);
  for (bool disable : {true, false}) {
    auto [cmd, o] =
        leaf(*item, disable ? "disable" : "enable",
             disable ? "Skip an item from the next trigger on" : "Run an item again",
             [disable](RegistryCenter& r, const OpOptions& op) { return Item(r, op, disable); });
    AddJobArg(cmd, o);
    cmd->add_option("item", o->item, "Item number (0 to shardingTotalCount-1)")->required();
  }
}

void AddServerCommand(CLI::App& app, int* exit_code) {
  CLI::App* server =
      app.add_subcommand("server", "Operate the servers (hosts) of a namespace, in every job");
  server->require_subcommand(1);
  {
    auto opts = std::make_shared<OpOptions>();
    Leaf(*server, "list", "Every server: instances, jobs, disabled jobs", opts, exit_code,
         ServerList);
  }
  for (const char* verb : {"disable", "enable", "shutdown"}) {
    const std::string past = std::string(verb) == "disable"  ? "disabled"
                             : std::string(verb) == "enable" ? "enabled"
                                                             : "shut down";
    auto opts = std::make_shared<OpOptions>();
    CLI::App* cmd =
        Leaf(*server, verb,
             std::string(verb) == "shutdown" ? "Stop every job's instances on a server"
                                             : "Disable or enable a server in every job",
             opts, exit_code,
             [past](RegistryCenter& r, const OpOptions& op) { return ServerOp(r, op, past); });
    cmd->add_option("ip", opts->server, "Server IP")->required();
  }
}

}  // namespace elasticjob::cli
