#include "elasticjob/workflow/workflow_api.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "elasticjob/config/job_configuration.h"
#include "elasticjob/mutex.h"
#include "workflow/workflow_node.h"
#include "workflow/workflow_records.h"

namespace elasticjob {

namespace {

using namespace workflow;  // NOLINT(google-build-using-namespace)

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<std::vector<std::string>> ChildrenOf(RegistryCenter& reg, const std::string& key) {
  auto children = reg.GetChildrenKeysDirectly(key);
  if (!children.ok()) {
    if (children.status().code() == StatusCode::kNotFound) return std::vector<std::string>{};
    return children.status();
  }
  std::sort(children->begin(), children->end());
  return children;
}

Status CheckWorkflowName(std::string_view name) {
  if (name.empty() || name.find('/') != std::string_view::npos) {
    return InvalidArgument(fmt::format("workflow '{}': expected a name without '/'", name));
  }
  return Status::Ok();
}

class Api final : public WorkflowAPI {
 public:
  explicit Api(RegistryCenter& reg) : reg_(reg) {}

  Status Add(const WorkflowDefinition& d, bool replace) override {
    Status valid = ValidateWorkflow(d, [this](std::string_view job) -> Status {
      auto config = reg_.GetDirectly(fmt::format("/{}/config", job));
      if (!config.ok()) {
        if (config.status().code() == StatusCode::kNotFound) {
          return NotFound("no such job in the namespace");
        }
        return config.status();
      }
      // A job disabled in its configuration (ElasticJob's `disabled: true`).
      auto parsed = ConfigFromYaml(*config);
      if (parsed.ok() && parsed->disabled) return FailedPrecondition("the job is disabled");
      return Status::Ok();
    });
    if (!valid.ok()) return valid;
    // Nested workflows exist, and none nests this one again (however deep).
    for (const WorkflowNode& n : d.nodes) {
      if (n.kind != WorkflowNodeKind::kWorkflow) continue;
      std::vector<std::string> todo = {n.workflow};
      std::set<std::string> seen;
      while (!todo.empty()) {
        const std::string name = todo.back();
        todo.pop_back();
        if (name == d.name) {
          return InvalidArgument(fmt::format("node '{}': workflow '{}' nests '{}' again: a cycle",
                                             n.id, n.workflow, d.name));
        }
        if (!seen.insert(name).second) continue;
        auto yaml = reg_.GetDirectly(DefinitionPath(name));
        if (!yaml.ok()) {
          return NotFound(fmt::format("node '{}': workflow '{}': no such workflow", n.id, name));
        }
        auto nested = WorkflowFromYaml(*yaml);
        if (!nested.ok()) continue;
        for (const WorkflowNode& m : nested->nodes) {
          if (m.kind == WorkflowNodeKind::kWorkflow) todo.push_back(m.workflow);
        }
      }
    }
    const std::string key = DefinitionPath(d.name);
    auto existing = reg_.GetDirectly(key);
    if (existing.ok() && !replace) {
      return Status(StatusCode::kAlreadyExists,
                    fmt::format("workflow '{}' exists (replace it to change it)", d.name));
    }
    return reg_.Persist(key, WorkflowToYaml(d));
  }

  Status Remove(std::string_view name) override {
    if (auto existing = DefinitionYaml(name); !existing.ok()) return existing.status();
    return reg_.Remove(WorkflowPath(name));
  }

  Result<std::vector<WorkflowBrief>> List() override {
    auto names = ChildrenOf(reg_, std::string(kRoot));
    if (!names.ok()) return names.status();
    std::vector<WorkflowBrief> result;
    for (const std::string& name : *names) {
      auto def = Get(name);
      if (!def.ok()) continue;
      WorkflowBrief b;
      b.name = name;
      b.cron = def->cron;
      b.nodes = def->nodes.size();
      auto leader = reg_.GetDirectly(LeaderPath(name));
      if (leader.ok()) b.coordinator = *leader;
      auto ids = ChildrenOf(reg_, InstancesPath(name));
      if (ids.ok() && !ids->empty()) {
        b.last_instance = ids->back();
        auto inst = Instance(b.last_instance);
        if (inst.ok()) b.last_status = inst->status;
      }
      result.push_back(std::move(b));
    }
    return result;
  }

  Result<WorkflowDefinition> Get(std::string_view name) override {
    auto yaml = DefinitionYaml(name);
    if (!yaml.ok()) return yaml.status();
    auto def = WorkflowFromYaml(*yaml);
    if (!def.ok()) {
      return FailedPrecondition(fmt::format("workflow '{}': {}", name, def.status().message()));
    }
    return def;
  }

  Result<std::string> Run(std::string_view name, std::string_view parameter) override {
    auto yaml = DefinitionYaml(name);
    if (!yaml.ok()) return yaml.status();
    InstanceHeader header;
    header.created_ms = NowMs();
    header.trigger = "operator";
    header.context_json = ContextFromParameter(std::string(parameter));
    header.definition_yaml = *yaml;
    auto key =
        reg_.PersistSequential(InstancesPath(name) + "/" + std::string(name) + "-", ToJson(header));
    if (!key.ok()) return key.status();
    return key->substr(key->rfind('/') + 1);
  }

  Result<std::vector<WorkflowInstanceStatus>> History(std::string_view name,
                                                      size_t limit) override {
    if (Status s = CheckWorkflowName(name); !s.ok()) return s;
    auto exists = reg_.GetDirectly(DefinitionPath(name));
    if (!exists.ok() && exists.status().code() == StatusCode::kNotFound) {
      return NotFound(fmt::format("workflow '{}' not found", name));
    }
    auto ids = ChildrenOf(reg_, InstancesPath(name));
    if (!ids.ok()) return ids.status();
    std::vector<WorkflowInstanceStatus> result;
    for (auto it = ids->rbegin(); it != ids->rend() && result.size() < limit; ++it) {
      auto inst = Instance(*it);
      if (inst.ok()) result.push_back(*std::move(inst));
    }
    return result;
  }

  Result<WorkflowInstanceStatus> Instance(std::string_view instance_id) override {
    const std::string id(instance_id);
    const std::string name = WorkflowOfInstance(id);
    if (name.empty() || id.find('/') != std::string::npos) {
      return InvalidArgument(
          fmt::format("workflow instance '{}': expected {{workflow}}-{{number}}", id));
    }
    auto header_text = reg_.GetDirectly(InstancePath(name, id));
    if (!header_text.ok()) {
      if (header_text.status().code() == StatusCode::kNotFound) {
        return NotFound(fmt::format("workflow instance '{}' not found", id));
      }
      return header_text.status();
    }
    WorkflowInstanceStatus out;
    out.id = id;
    out.workflow = name;
    auto header = HeaderFromJson(*header_text);
    if (!header.ok()) return FailedPrecondition(header.status().message());
    out.trigger = header->trigger;
    out.created_ms = header->created_ms;
    out.context_json = header->context_json;
    auto def = WorkflowFromYaml(header->definition_yaml);
    // The requests before the state: the coordinator deletes a request in the write that
    // changes the state, so a request gone here has its effect in the state read after.
    auto ops = ChildrenOf(reg_, OpsPath(name, id));
    if (ops.ok()) out.pending_requests = static_cast<int>(ops->size());
    auto state_text = reg_.GetDirectly(StatePath(name, id));
    if (state_text.ok()) {
      auto state = StateFromJson(*state_text);
      if (state.ok()) {
        out.status = state->status;
        out.message = state->message;
        out.context_json = state->context_json;
        out.ended_ms = state->ended_ms;
      }
    } else if (state_text.status().code() != StatusCode::kNotFound) {
      return state_text.status();
    }
    if (def.ok()) {
      for (const WorkflowNode& n : def->nodes) {
        WorkflowNodeStatus ns;
        ns.id = n.id;
        auto rec_text = reg_.GetDirectly(NodePath(name, id, n.id));
        if (rec_text.ok()) {
          auto rec = NodeFromJson(*rec_text);
          if (rec.ok()) {
            ns.state = rec->state;
            ns.attempt = rec->attempt;
            ns.result = rec->result;
            ns.error = rec->error;
            ns.started_ms = rec->started_ms;
            ns.ended_ms = rec->ended_ms;
          }
        }
        out.nodes.push_back(std::move(ns));
      }
    }
    return out;
  }

  Result<WorkflowInstanceStatus> Wait(std::string_view instance_id,
                                      std::chrono::milliseconds timeout) override {
    auto first = Instance(instance_id);
    if (!first.ok() || first->finished()) return first;
    const std::string id(instance_id);
    const std::string name = WorkflowOfInstance(id);
    Mutex mu;
    CondVar cv{&mu};
    bool changed = false;
    ThreadPool pool(1);
    SerialExecutor events(pool);
    auto watch = reg_.Watch(InstancePath(name, id), events, [&](const TreeEvent& e) {
      if (e.key != StatePath(name, id) && e.key != InstancePath(name, id) &&
          !e.key.starts_with(OpsPath(name, id))) {
        return;
      }
      MutexLock lock(&mu);
      changed = true;
      cv.SignalAll();
    });
    if (!watch.ok()) return watch.status();
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      auto now = Instance(instance_id);
      if (!now.ok() || now->finished()) return now;
      MutexLock lock(&mu);
      while (!changed && cv.WaitUntil(deadline)) {
      }
      if (!changed) {
        return Status(StatusCode::kTimeout,
                      fmt::format("workflow instance '{}': still {} after {} ms", id, now->status,
                                  timeout.count()));
      }
      changed = false;
    }
  }

  Status Stop(std::string_view instance_id) override { return Request(instance_id, "stop", ""); }
  Status RetryNode(std::string_view instance_id, std::string_view node) override {
    return Request(instance_id, "retry", node);
  }
  Status MarkNodeSucceeded(std::string_view instance_id, std::string_view node) override {
    return Request(instance_id, "succeed", node);
  }

 private:
  // The stored definition's YAML of workflow `name`: INVALID_ARGUMENT for a bad name,
  // NOT_FOUND naming the workflow when there is none.
  Result<std::string> DefinitionYaml(std::string_view name) {
    if (Status s = CheckWorkflowName(name); !s.ok()) return s;
    auto yaml = reg_.GetDirectly(DefinitionPath(name));
    if (!yaml.ok() && yaml.status().code() == StatusCode::kNotFound) {
      return NotFound(fmt::format("workflow '{}' not found", name));
    }
    return yaml;
  }
  Status Request(std::string_view instance_id, std::string_view what, std::string_view node) {
    auto inst = Instance(instance_id);
    if (!inst.ok()) return inst.status();
    if (what == "stop") {
      if (inst->finished()) {
        return FailedPrecondition(
            fmt::format("workflow instance '{}' has ended ({})", inst->id, inst->status));
      }
      return reg_.Persist(OpsPath(inst->workflow, inst->id) + "/stop", "");
    }
    auto n = std::find_if(inst->nodes.begin(), inst->nodes.end(),
                          [&](const WorkflowNodeStatus& s) { return s.id == node; });
    if (n == inst->nodes.end()) {
      return NotFound(fmt::format("workflow instance '{}': no node '{}'", inst->id, node));
    }
    if (n->state != "FAILED") {
      return FailedPrecondition(fmt::format("workflow instance '{}': node '{}' is {}, not FAILED",
                                            inst->id, node, n->state));
    }
    return reg_.Persist(fmt::format("{}/{}@{}", OpsPath(inst->workflow, inst->id), what, node), "");
  }

  RegistryCenter& reg_;
};

}  // namespace

std::unique_ptr<WorkflowAPI> NewWorkflowAPI(RegistryCenter& registry) {
  return std::make_unique<Api>(registry);
}

}  // namespace elasticjob
