// `elasticjob workflow ...`: the workflow API on the command line (docs/workflows.md). Tables
// for people, --json for scripts; exit 0 done, 1 the operation failed (no such workflow or
// job, registry unreachable; `run --wait`: the instance did not succeed), 2 bad input (a
// definition refused for its shape: a cycle, a dangling edge, a bad key).
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/registry_option.h"
#include "elasticjob/schedule/time_zone.h"
#include "elasticjob/workflow/workflow_api.h"
#include "workflow/instance_json.h"

namespace elasticjob::cli {
namespace {

struct WfOptions {
  std::string registry;
  bool json = false;
  std::string name;  // workflow, or instance id
  std::string file;
  std::string node;
  std::string param;
  bool replace = false;
  std::string wait;  // run --wait[=SECONDS]; empty: not given
  int limit = 20;
  int count = 1;  // run --count
};

constexpr int kDefaultWaitSeconds = 600;

using Body = std::function<int(RegistryCenter&, const WfOptions&)>;
CLI::App* Leaf(CLI::App& parent, const char* name, const char* help,
               std::shared_ptr<WfOptions> opts, int* exit_code, Body body) {
  CLI::App* cmd = parent.add_subcommand(name, help);
  AddRegistryOption(*cmd, &opts->registry);
  cmd->add_flag("--json", opts->json, "Print JSON for scripts instead of a table");
  cmd->callback([opts, exit_code, body = std::move(body)] {
    auto registry = ConnectRegistry(opts->registry, exit_code);
    if (registry == nullptr) return;
    *exit_code = body(*registry, *opts);
    registry->Close();
  });
  return cmd;
}

std::string Time(int64_t ms) {
  if (ms <= 0) return "";
  return TimeZone::SystemDefault().FormatIso8601(
      std::chrono::system_clock::time_point(std::chrono::milliseconds(ms)));
}

void PrintInstance(const WorkflowInstanceStatus& s, bool json) {
  if (json) {
    PrintJson(std::cout, workflow::InstanceStatusJson(s));
    return;
  }
  std::cout << "instance: " << s.id << "\nstatus:   " << s.status
            << (s.message.empty() ? "" : " (" + s.message + ")") << "\ntrigger:  " << s.trigger
            << "\ncreated:  " << Time(s.created_ms) << "\nended:    " << Time(s.ended_ms)
            << "\ncontext:  " << s.context_json << "\n\n";
  using K = Table::Kind;
  Table t({"NODE", "STATE", "ATTEMPT", "RESULT", "ERROR"},
          {K::kText, K::kText, K::kNumber, K::kText, K::kText});
  for (const auto& n : s.nodes) {
    t.AddRow({n.id, n.state, std::to_string(n.attempt), n.result, n.error});
  }
  t.Print(std::cout);
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) return InvalidArgument(fmt::format("{}: cannot be read", path));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return InvalidArgument(fmt::format("{}: cannot be read", path));
  return text;
}

int List(RegistryCenter& reg, const WfOptions& o) {
  auto list = NewWorkflowAPI(reg)->List();
  if (!list.ok()) return ReportFailure(list.status());
  using K = Table::Kind;
  Table t({"WORKFLOW", "CRON", "NODES", "COORDINATOR", "LAST_INSTANCE", "LAST_STATUS"},
          {K::kText, K::kText, K::kNumber, K::kText, K::kText, K::kText});
  for (const auto& b : *list) {
    t.AddRow({b.name, b.cron.value_or(""), std::to_string(b.nodes), b.coordinator, b.last_instance,
              b.last_status});
  }
  if (o.json) {
    PrintJson(std::cout, t.ToJson());
  } else {
    t.Print(std::cout);
  }
  return kExitOk;
}

int Show(RegistryCenter& reg, const WfOptions& o) {
  auto def = NewWorkflowAPI(reg)->Get(o.name);
  if (!def.ok()) return ReportFailure(def.status());
  if (o.json) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& n : def->nodes) {
      nlohmann::json j = {{"id", n.id},
                          {"kind", n.kind == WorkflowNodeKind::kJob        ? "job"
                                   : n.kind == WorkflowNodeKind::kDecision ? "decision"
                                                                           : "workflow"},
                          {"job", n.job},
                          {"allowFailure", n.allow_failure},
                          {"disabled", n.disabled},
                          {"retries", n.retries}};
      if (n.param) j["param"] = *n.param;
      if (!n.expression.empty()) j["expression"] = n.expression;
      if (!n.workflow.empty()) j["workflow"] = n.workflow;
      nodes.push_back(j);
    }
    nlohmann::json edges = nlohmann::json::array();
    for (const auto& e : def->edges) {
      nlohmann::json j = {{"from", e.from}, {"to", e.to}};
      if (e.when) j["when"] = *e.when;
      edges.push_back(j);
    }
    PrintJson(std::cout,
              {{"name", def->name},
               {"cron", def->cron ? nlohmann::json(*def->cron) : nlohmann::json()},
               {"timeZone", def->time_zone ? nlohmann::json(*def->time_zone) : nlohmann::json()},
               {"maxRunTimeSeconds", def->max_run_time_seconds},
               {"overlap", WorkflowOverlapName(def->overlap)},
               {"maxConcurrent", def->max_concurrent},
               {"retention", def->retention},
               {"nodes", nodes},
               {"edges", edges}});
    return kExitOk;
  }
  std::cout << WorkflowToYaml(*def);
  return kExitOk;
}

int Add(RegistryCenter& reg, const WfOptions& o) {
  auto text = ReadFile(o.file);
  if (!text.ok()) return ReportFailure(text.status());
  auto def = WorkflowFromYaml(*text);
  if (!def.ok()) return ReportFailure(def.status().WithContext(o.file));
  if (Status s = NewWorkflowAPI(reg)->Add(*def, o.replace); !s.ok()) {
    return ReportFailure(s.WithContext(fmt::format("workflow '{}'", def->name)));
  }
  if (o.json) {
    PrintJson(std::cout, {{"workflow", def->name}, {"added", true}});
  } else {
    std::cout << "workflow '" << def->name << "' added (" << def->nodes.size() << " nodes)\n";
  }
  return kExitOk;
}

int Remove(RegistryCenter& reg, const WfOptions& o) {
  if (Status s = NewWorkflowAPI(reg)->Remove(o.name); !s.ok()) return ReportFailure(s);
  if (o.json) {
    PrintJson(std::cout, {{"workflow", o.name}, {"removed", true}});
  } else {
    std::cout << "workflow '" << o.name << "' removed\n";
  }
  return kExitOk;
}

// --wait's seconds (0 when not given), or INVALID_ARGUMENT naming the value.
Result<int> WaitSeconds(const WfOptions& o) {
  if (o.wait.empty()) return 0;
  try {
    size_t used = 0;
    const int seconds = std::stoi(o.wait, &used);
    if (used == o.wait.size() && seconds >= 0) return seconds;
  } catch (const std::exception&) {
  }
  return InvalidArgument(fmt::format("--wait: '{}' is not a number of seconds", o.wait));
}

// `run --count N` (N > 1): N instances requested at once, one id a line; with --wait, each
// one's end ("ID STATUS"), exit 0 when all succeeded.
int RunMany(WorkflowAPI& api, const WfOptions& o, int seconds) {
  std::vector<std::string> ids;
  for (int i = 0; i < o.count; ++i) {
    auto id = api.Run(o.name, o.param);
    if (!id.ok()) return ReportFailure(id.status());
    ids.push_back(*id);
  }
  if (o.wait.empty()) {
    if (o.json) {
      PrintJson(std::cout, {{"instances", ids}});
    } else {
      for (const std::string& id : ids) std::cout << id << "\n";
    }
    return kExitOk;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int exit_code = kExitOk;
  nlohmann::json all = nlohmann::json::array();
  for (const std::string& id : ids) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    auto end = api.Wait(id, std::max(left, std::chrono::milliseconds(0)));
    if (!end.ok()) return ReportFailure(end.status());
    if (end->status != "SUCCEEDED") exit_code = kExitFailed;
    if (o.json) {
      all.push_back(workflow::InstanceStatusJson(*end));
    } else {
      std::cout << id << " " << end->status << "\n";
    }
  }
  if (o.json) PrintJson(std::cout, all);
  return exit_code;
}

int Run(RegistryCenter& reg, const WfOptions& o) {
  auto api = NewWorkflowAPI(reg);
  auto seconds = WaitSeconds(o);
  if (!seconds.ok()) return ReportFailure(seconds.status());
  if (o.count < 1 || o.count > 10000) {
    return ReportFailure(
        InvalidArgument(fmt::format("--count: expected 1 to 10000, got {}", o.count)));
  }
  if (o.count > 1) return RunMany(*api, o, *seconds);
  auto id = api->Run(o.name, o.param);
  if (!id.ok()) return ReportFailure(id.status());
  if (o.wait.empty()) {
    if (o.json) {
      PrintJson(std::cout, {{"instance", *id}});
    } else {
      std::cout << *id << "\n";
    }
    return kExitOk;
  }
  if (!o.json) std::cout << *id << std::endl;
  auto end = api->Wait(*id, std::chrono::seconds(*seconds));
  if (!end.ok()) return ReportFailure(end.status());
  if (o.json) {
    PrintJson(std::cout, workflow::InstanceStatusJson(*end));
  } else {
    std::cout << end->status << (end->message.empty() ? "" : ": " + end->message) << "\n";
  }
  return end->status == "SUCCEEDED" ? kExitOk : kExitFailed;
}

int History(RegistryCenter& reg, const WfOptions& o) {
  auto history = NewWorkflowAPI(reg)->History(o.name, static_cast<size_t>(o.limit));
  if (!history.ok()) return ReportFailure(history.status());
  if (o.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& s : *history) all.push_back(workflow::InstanceStatusJson(s));
    PrintJson(std::cout, all);
    return kExitOk;
  }
  Table t({"INSTANCE", "STATUS", "TRIGGER", "CREATED", "ENDED", "MESSAGE"});
  for (const auto& s : *history) {
    t.AddRow({s.id, s.status, s.trigger, Time(s.created_ms), Time(s.ended_ms), s.message});
  }
  t.Print(std::cout);
  return kExitOk;
}

int Instance(RegistryCenter& reg, const WfOptions& o) {
  auto seconds = WaitSeconds(o);
  if (!seconds.ok()) return ReportFailure(seconds.status());
  auto s = o.wait.empty() ? NewWorkflowAPI(reg)->Instance(o.name)
                          : NewWorkflowAPI(reg)->Wait(o.name, std::chrono::seconds(*seconds));
  if (!s.ok()) return ReportFailure(s.status());
  PrintInstance(*s, o.json);
  return kExitOk;
}

int Operate(RegistryCenter& reg, const WfOptions& o, const std::string& what) {
  auto api = NewWorkflowAPI(reg);
  Status s = what == "stop"    ? api->Stop(o.name)
             : what == "retry" ? api->RetryNode(o.name, o.node)
                               : api->MarkNodeSucceeded(o.name, o.node);
  if (!s.ok()) return ReportFailure(s);
  const std::string message =
      what == "stop" ? fmt::format("instance {}: stop requested", o.name)
                     : fmt::format("instance {} node {}: {} requested", o.name, o.node, what);
  if (o.json) {
    PrintJson(std::cout, {{"instance", o.name}, {"node", o.node}, {"requested", what}});
  } else {
    std::cout << message << "\n";
  }
  return kExitOk;
}

}  // namespace

void AddWorkflowCommand(CLI::App& app, int* exit_code) {
  CLI::App* wf = app.add_subcommand(
      "workflow",
      "Workflows: DAGs of jobs coordinated through the registry (list, show, add, remove, run, "
      "history, instance, stop, retry, succeed)");
  wf->require_subcommand(1);
  auto o = std::make_shared<WfOptions>();
  Leaf(*wf, "list", "List the workflows with their coordinator and last instance", o, exit_code,
       List);
  Leaf(*wf, "show", "Print a workflow's definition (YAML; --json)", o, exit_code, Show)
      ->add_option("name", o->name, "Workflow name")
      ->required();
  auto* add = Leaf(*wf, "add",
                   "Add a workflow from a YAML file (refused naming the node: a "
                   "cycle, an unknown or disabled job, a dangling edge)",
                   o, exit_code, Add);
  add->add_option("file", o->file, "The workflow's YAML file")->required();
  add->add_flag("--replace", o->replace, "Replace the workflow if it exists");
  Leaf(*wf, "remove", "Remove a workflow and its instances", o, exit_code, Remove)
      ->add_option("name", o->name, "Workflow name")
      ->required();
  auto* run = Leaf(*wf, "run",
                   "Start an instance now and print its id; with --wait, wait for "
                   "its end and exit 0 when it succeeded, 1 when not",
                   o, exit_code, Run);
  run->add_option("name", o->name, "Workflow name")->required();
  run->add_option("--param", o->param,
                  "The context the instance starts from (a JSON object; other text becomes "
                  "{\"param\": text})");
  run->add_option("--count", o->count,
                  "Start N instances at once, one id a line (overlap: parallel runs them side "
                  "by side); with --wait, print each one's end and exit 0 when all succeeded")
      ->type_name("N");
  run->add_option("--wait", o->wait, "Wait for the instance's end (at most SECONDS)")
      ->expected(0, 1)
      ->default_str(std::to_string(kDefaultWaitSeconds))
      ->type_name("SECONDS");
  auto* history =
      Leaf(*wf, "history", "A workflow's instances, newest first", o, exit_code, History);
  history->add_option("name", o->name, "Workflow name")->required();
  history->add_option("--limit", o->limit, "At most this many (default 20)");
  auto* instance = Leaf(*wf, "instance", "One instance with each node's state and result", o,
                        exit_code, Instance);
  instance->add_option("id", o->name, "Instance id ({workflow}-{number})")->required();
  instance->add_option("--wait", o->wait, "First wait for the instance's end (at most SECONDS)")
      ->expected(0, 1)
      ->default_str(std::to_string(kDefaultWaitSeconds))
      ->type_name("SECONDS");
  Leaf(*wf, "stop", "Stop an instance (no node starts after)", o, exit_code,
       [](RegistryCenter& r, const WfOptions& w) { return Operate(r, w, "stop"); })
      ->add_option("id", o->name, "Instance id")
      ->required();
  auto* retry = Leaf(*wf, "retry", "Run a FAILED node of an instance again", o, exit_code,
                     [](RegistryCenter& r, const WfOptions& w) { return Operate(r, w, "retry"); });
  retry->add_option("id", o->name, "Instance id")->required();
  retry->add_option("node", o->node, "Node id")->required();
  auto* succeed =
      Leaf(*wf, "succeed", "Take a FAILED node as SUCCEEDED (the instance runs on)", o, exit_code,
           [](RegistryCenter& r, const WfOptions& w) { return Operate(r, w, "succeed"); });
  succeed->add_option("id", o->name, "Instance id")->required();
  succeed->add_option("node", o->node, "Node id")->required();
}

}  // namespace elasticjob::cli
