#include "workflow/workflow_coordinator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <nlohmann/json.hpp>
#include <set>

#include "elasticjob/config/job_configuration.h"
#include "elasticjob/schedule/cron_expression.h"
#include "elasticjob/schedule/time_zone.h"
#include "infra/log.h"
#include "instance/job_instance.h"
#include "workflow/decision.h"
#include "workflow/node_job.h"
#include "workflow/workflow_node.h"

namespace elasticjob::workflow {

namespace {

// A runner's instance lost mid-run restarts the node at most this often before it fails.
constexpr int kMaxLostRestarts = 3;
// A look whose commit failed (a conflicting write, a lost connection) is tried again then.
constexpr auto kRetryLook = std::chrono::seconds(1);

int64_t Ms(Clock::WallTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::string DefaultInstanceId() {
  auto ip = instance::DetectIp();
  return instance::JobInstance::For(ip.ok() ? *ip : "127.0.0.1", static_cast<long>(getpid()))
      .instance_id;
}

bool NodeTerminal(const std::string& s) {
  return s == "SUCCEEDED" || s == "FAILED" || s == "SKIPPED";
}

}  // namespace

struct Coordinator::Model {
  std::string name;
  std::string id;
  InstanceHeader header;
  WorkflowDefinition def;
  bool fresh = false;  // no state yet: this look starts it
  InstanceState state;
  bool state_changed = false;
  std::vector<NodeRecord> nodes;
  std::vector<bool> node_changed;
  std::vector<TransactionOp> ops;  // besides the records (run requests, op deletions)
  int64_t now_ms = 0;
  int64_t wake_at_ms = 0;    // > 0: look again then (a retry's interval)
  std::set<size_t> started;  // nodes started by this look: nothing of theirs to check yet
};

Coordinator::Coordinator(RegistryCenter& registry, Executor& executor,
                         WorkflowCoordinatorOptions options)
    : registry_(registry),
      executor_(executor),
      instance_id_(options.instance_id.empty() ? DefaultInstanceId() : options.instance_id),
      clock_(options.clock != nullptr ? *options.clock : Clock::System()),
      log_(std::move(options.logger), ""),
      strand_(executor_),
      timer_(clock_, strand_) {}

Coordinator::~Coordinator() {
  Stop();
  // A look under way on the strand reads the members destroyed before strand_: it ends first
  // (Stop released every subscription and the timer, so nothing is posted after this).
  std::promise<void> idle;
  strand_.Post([&idle] { idle.set_value(); });
  idle.get_future().wait();
}

Status Coordinator::Start() {
  {
    MutexLock lock(&mu_);
    if (started_) return FailedPrecondition("workflow coordinator: started twice");
    started_ = true;
  }
  // The watch does not need /.workflows to exist: a namespace without workflows gets none.
  auto watch = registry_.Watch(kRoot, strand_, [this](const TreeEvent& e) { OnEvent(e); });
  if (!watch.ok()) return watch.status().WithContext("workflow coordinator: watching");
  auto connection = registry_.AddConnectionStateListener(strand_, [this](ConnectionState s) {
    if (s == ConnectionState::kReconnected || s == ConnectionState::kLost) MarkAll();
  });
  MutexLock lock(&mu_);
  watch_ = std::move(*watch);
  connection_ = std::move(connection);
  return Status::Ok();
}

void Coordinator::Stop() {
  std::unique_ptr<Subscription> watch;
  std::unique_ptr<Subscription> connection;
  std::map<std::string, std::unique_ptr<Subscription>> job_watches;
  std::vector<std::string> led;
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    watch = std::move(watch_);
    connection = std::move(connection_);
    job_watches.swap(job_watches_);
    led = leading_;
    leading_.clear();
  }
  watch.reset();
  connection.reset();
  job_watches.clear();
  timer_.Stop();
  // Let the others take over at once: our leader nodes go (if still ours).
  for (const std::string& name : led) {
    auto value = registry_.GetDirectly(LeaderPath(name));
    if (value.ok() && *value == instance_id_) (void)registry_.Remove(LeaderPath(name));
  }
}

std::vector<std::string> Coordinator::Leading() {
  MutexLock lock(&mu_);
  return leading_;
}

bool Coordinator::WaitLeading(const std::string& name, std::chrono::milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  MutexLock lock(&mu_);
  auto leads = [&]() ELASTICJOB_REQUIRES(mu_) {
    return std::find(leading_.begin(), leading_.end(), name) != leading_.end();
  };
  while (!leads() && leading_cv_.WaitUntil(deadline)) {
  }
  return leads();
}

void Coordinator::OnEvent(const TreeEvent& event) {
  // Our own writes, now visible to reads.
  auto o = overlay_.find(event.key);
  if (o != overlay_.end()) {
    const bool gone = event.type == TreeEvent::Type::kDeleted;
    if ((gone && !o->second) || (!gone && o->second == event.value)) overlay_.erase(o);
  }
  std::string_view rest(event.key);
  if (!rest.starts_with(kRoot)) return;
  rest.remove_prefix(kRoot.size());
  if (rest.empty() || rest[0] != '/') return;
  rest.remove_prefix(1);
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return;
  const std::string name(rest.substr(0, slash));
  rest.remove_prefix(slash + 1);
  if (rest == "definition" || rest == "leader") {
    dirty_workflows_.insert(name);
  } else if (rest.starts_with("instances/")) {
    rest.remove_prefix(std::string_view("instances/").size());
    const std::string id(rest.substr(0, rest.find('/')));
    auto led = workflows_.find(name);
    if (led != workflows_.end() && led->second.leading) dirty_instances_.emplace(name, id);
    // A nested instance's state: its parent looks again.
    if (rest == id + "/state") {
      auto header = Read(InstancePath(name, id));
      auto parsed = header.ok() ? HeaderFromJson(*header) : Result<InstanceHeader>(header.status());
      if (parsed.ok() && !parsed->parent.empty()) {
        const size_t slash2 = parsed->parent.find('/');
        const std::string parent_name = parsed->parent.substr(0, slash2);
        auto parent = workflows_.find(parent_name);
        if (slash2 != std::string::npos && parent != workflows_.end() && parent->second.leading) {
          dirty_instances_.emplace(parent_name, parsed->parent.substr(slash2 + 1));
        }
      }
    }
  }
  Schedule();
}

void Coordinator::MarkAll() {
  for (const std::string& name : Children(std::string(kRoot))) dirty_workflows_.insert(name);
  Schedule();
}

void Coordinator::Schedule() {
  if (drain_posted_) return;
  drain_posted_ = true;
  strand_.Post([this] { Drain(); });
}

void Coordinator::Drain() {
  drain_posted_ = false;
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
  }
  auto workflows = std::move(dirty_workflows_);
  dirty_workflows_.clear();
  for (const std::string& name : workflows) LookAtWorkflow(name);
  auto instances = std::move(dirty_instances_);
  dirty_instances_.clear();
  for (const auto& [name, id] : instances) {
    auto led = workflows_.find(name);
    if (led != workflows_.end() && led->second.leading) LookAtInstance(name, id);
  }
  std::vector<std::string> leading;
  for (const auto& [name, led] : workflows_) {
    if (led.leading) leading.push_back(name);
  }
  MutexLock lock(&mu_);
  leading_ = std::move(leading);
  leading_cv_.SignalAll();
}

Result<std::string> Coordinator::Read(const std::string& key) {
  auto o = overlay_.find(key);
  if (o != overlay_.end()) {
    if (!o->second) return NotFound(key);
    return *o->second;
  }
  return registry_.Get(key);
}

std::vector<std::string> Coordinator::Children(const std::string& key) {
  auto children = registry_.GetChildrenKeys(key);
  if (!children.ok()) return {};
  std::sort(children->begin(), children->end());
  return *std::move(children);
}

void Coordinator::LookAtWorkflow(const std::string& name) {
  auto definition = Read(DefinitionPath(name));
  auto found = workflows_.find(name);
  if (!definition.ok()) {
    if (found != workflows_.end()) {
      if (found->second.cron_task != 0) timer_.Cancel(found->second.cron_task);
      workflows_.erase(found);
    }
    return;
  }
  Led& led = workflows_[name];
  const bool was_leading = led.leading;
  auto leader = Read(LeaderPath(name));
  if (leader.ok()) {
    led.leading = *leader == instance_id_;
    if (!led.leading) led.term.clear();
  } else if (leader.status().code() == StatusCode::kNotFound) {
    // Taking over also ends the previous leader's term (its steps check their term node).
    std::vector<TransactionOp> take = {
        TransactionOp::Create(LeaderPath(name), instance_id_, CreateMode::kEphemeral)};
    auto terms = registry_.GetChildrenKeysDirectly(TermsPath(name));
    if (terms.ok()) {
      for (const std::string& t : *terms)
        take.push_back(TransactionOp::Delete(TermsPath(name) + "/" + t));
    } else {
      take.push_back(TransactionOp::Create(TermsPath(name), ""));
    }
    const std::string term = fmt::format("{}#{}", instance_id_, ++terms_taken_);
    take.push_back(TransactionOp::Create(TermsPath(name) + "/" + term, ""));
    Status s = registry_.ExecuteInTransaction(take);
    led.leading = s.ok();
    if (s.ok()) led.term = term;
    if (s.ok()) {
      overlay_[LeaderPath(name)] = instance_id_;
      log_("INFO", fmt::format("workflow '{}': coordinated here ({})", name, instance_id_));
    }
  } else {
    led.leading = false;
  }
  const bool changed_definition = led.definition_yaml != *definition;
  led.definition_yaml = *definition;
  if (!led.leading) {
    if (led.cron_task != 0) timer_.Cancel(led.cron_task);
    led.cron_task = 0;
    return;
  }
  if (!was_leading || changed_definition) {
    ArmCron(name, led);
    // A new coordinator reads every instance: it carries on from the registry.
    for (const std::string& id : Children(InstancesPath(name))) {
      dirty_instances_.emplace(name, id);
    }
  }
}

void Coordinator::ArmCron(const std::string& name, Led& led) {
  if (led.cron_task != 0) timer_.Cancel(led.cron_task);
  led.cron_task = 0;
  auto def = WorkflowFromYaml(led.definition_yaml);
  if (!def.ok() || !def->cron) return;
  auto cron = CronExpression::Parse(*def->cron);
  auto zone = def->time_zone ? TimeZone::Parse(*def->time_zone)
                             : Result<TimeZone>(TimeZone::SystemDefault());
  if (!cron.ok() || !zone.ok()) return;
  auto next = cron->NextFireTimeAfter(clock_.WallNow(), *zone);
  if (!next) return;
  const Clock::WallTime fire = *next;
  led.cron_task = timer_.ScheduleAt(fire, [this, name, fire] { CronFire(name, fire); });
}

void Coordinator::CronFire(const std::string& name, Clock::WallTime fire) {
  auto it = workflows_.find(name);
  if (it == workflows_.end() || !it->second.leading) return;
  it->second.cron_task = 0;
  InstanceHeader header;
  header.created_ms = Ms(fire);
  header.trigger = "cron";
  header.definition_yaml = it->second.definition_yaml;
  // Fenced as the steps are: a coordinator paused past its term (a successor took over and
  // fired this time itself) starts no second instance for it.
  std::vector<TransactionOp> ops{TransactionOp::Create(
      InstancesPath(name) + "/" + name + "-", ToJson(header), CreateMode::kPersistentSequential)};
  Fence(it->second, name, ops);
  // The parent first (a transaction creates no parents); an empty node, harmless unfenced.
  if (!registry_.IsExisted(InstancesPath(name)).value_or(true)) {
    (void)registry_.Persist(InstancesPath(name), "");
  }
  if (Status s = registry_.ExecuteInTransaction(ops); !s.ok()) {
    dirty_workflows_.insert(name);  // still leading? read again
    log_("WARN",
         fmt::format("workflow '{}': the cron fire at {} ms: {}", name, Ms(fire), s.ToString()));
  }
  ArmCron(name, it->second);
}

void Coordinator::ArmLook(const std::string& name, const std::string& id, Clock::WallTime at) {
  auto key = std::make_pair(name, id);
  const int64_t due = Ms(at);
  auto armed = looks_armed_.find(key);
  if (armed != looks_armed_.end() && armed->second <= due) return;
  looks_armed_[key] = due;
  timer_.ScheduleAt(at, [this, key, due] {
    auto a = looks_armed_.find(key);
    if (a != looks_armed_.end() && a->second == due) looks_armed_.erase(a);
    dirty_instances_.insert(key);
    Schedule();
  });
}

void Coordinator::Fence(const Led& led, const std::string& name, std::vector<TransactionOp>& ops) {
  // A write commits only while this coordinator's term lasts (a successor deletes it).
  if (!led.term.empty()) {
    ops.insert(ops.begin(), TransactionOp::CheckExists(TermsPath(name) + "/" + led.term));
  }
}

bool Coordinator::Commit(const std::string& name, const std::string& id,
                         std::vector<TransactionOp> ops) {
  if (ops.empty()) return true;
  auto led = workflows_.find(name);
  if (led != workflows_.end()) Fence(led->second, name, ops);
  Status s = registry_.ExecuteInTransaction(ops);
  if (!s.ok()) {
    dirty_workflows_.insert(name);  // still leading? read again
    log_("WARN", fmt::format("workflow '{}' instance {}: {} (looked at again in {} s)", name, id,
                             s.ToString(), kRetryLook.count()));
    ArmLook(name, id, clock_.WallNow() + kRetryLook);
    request_parents_.clear();
    return false;
  }
  for (const TransactionOp& op : ops) {
    if (op.type == TransactionOp::Type::kDelete) {
      overlay_[op.key] = std::nullopt;
    } else if (op.type != TransactionOp::Type::kCheckExists &&
               op.key.starts_with(std::string(kRoot))) {
      overlay_[op.key] = op.value;
    }
  }
  return true;
}

void Coordinator::LookAtInstance(const std::string& name, const std::string& id) {
  auto header_text = Read(InstancePath(name, id));
  if (!header_text.ok()) {
    // Removed: forget what we wrote below it.
    const std::string prefix = InstancePath(name, id);
    for (auto it = overlay_.lower_bound(prefix);
         it != overlay_.end() && it->first.starts_with(prefix);) {
      it = overlay_.erase(it);
    }
    return;
  }
  Model m;
  m.name = name;
  m.id = id;
  m.now_ms = Ms(clock_.WallNow());
  auto header = HeaderFromJson(*header_text);
  auto def = header.ok() ? WorkflowFromYaml(header->definition_yaml)
                         : Result<WorkflowDefinition>(header.status());
  auto state_text = Read(StatePath(name, id));
  if (!header.ok() || !def.ok()) {
    if (state_text.ok()) return;
    InstanceState failed;
    failed.status = "FAILED";
    failed.message = fmt::format("unreadable instance: {}",
                                 header.ok() ? def.status().message() : header.status().message());
    failed.started_ms = failed.ended_ms = m.now_ms;
    (void)Commit(name, id, {TransactionOp::Create(StatePath(name, id), ToJson(failed))});
    return;
  }
  m.header = *std::move(header);
  m.def = *std::move(def);
  const size_t n = m.def.nodes.size();
  m.nodes.assign(n, NodeRecord{});
  m.node_changed.assign(n, false);
  if (!state_text.ok()) {
    // A new instance: the overlap setting decides whether it starts now.
    const bool parallel = m.def.overlap == WorkflowOverlap::kParallel;
    int running = 0;
    for (const std::string& other : Children(InstancesPath(name))) {
      if (other == id) continue;
      auto other_state = Read(StatePath(name, other));
      if (other_state.ok()) {
        auto s = StateFromJson(*other_state);
        if (!s.ok() || IsTerminalInstanceStatus(s->status)) continue;
        if (parallel) {
          // Beside the others, up to maxConcurrent; past it, in order (by id) as they end.
          if (m.def.max_concurrent > 0 && ++running >= m.def.max_concurrent) return;
          continue;
        }
        if (m.def.overlap == WorkflowOverlap::kQueue) return;  // started when that one ends
        InstanceState skipped;
        skipped.status = "SKIPPED";
        skipped.message = fmt::format("instance {} was still running (overlap: skip)", other);
        skipped.started_ms = skipped.ended_ms = m.now_ms;
        log_("INFO",
             fmt::format("workflow '{}': instance {} skipped: {}", name, id, skipped.message));
        if (Commit(name, id, {TransactionOp::Create(StatePath(name, id), ToJson(skipped))})) {
          Retention(name, m.def.retention);
        }
        return;
      }
      // Queued before this one: it goes first.
      if (other < id && m.def.overlap == WorkflowOverlap::kQueue) return;
      if (other < id && parallel && m.def.max_concurrent > 0 && ++running >= m.def.max_concurrent) {
        return;
      }
    }
    m.fresh = true;
    m.state.status = "RUNNING";
    m.state.context_json = m.header.context_json;
    m.state.started_ms = m.now_ms;
    m.state_changed = true;
    std::fill(m.node_changed.begin(), m.node_changed.end(), true);
  } else {
    auto state = StateFromJson(*state_text);
    if (!state.ok()) return;
    m.state = *std::move(state);
    for (size_t i = 0; i < n; ++i) {
      auto rec = Read(NodePath(name, id, m.def.nodes[i].id));
      if (rec.ok()) {
        auto parsed = NodeFromJson(*rec);
        if (parsed.ok()) m.nodes[i] = *std::move(parsed);
      } else if (!IsTerminalInstanceStatus(m.state.status)) {
        m.node_changed[i] = true;  // missing: written now
      }
    }
  }
  // Operator requests (WorkflowAPI::Stop, RetryNode, MarkNodeSucceeded).
  for (const std::string& op : Children(OpsPath(name, id))) {
    m.ops.push_back(TransactionOp::Delete(OpsPath(name, id) + "/" + op));
    if (op == "stop") {
      if (!IsTerminalInstanceStatus(m.state.status)) {
        m.state.status = "STOPPED";
        m.state.message = "stopped by an operator";
        m.state.ended_ms = m.now_ms;
        m.state_changed = true;
        CancelRunningNodes(m);
      }
      continue;
    }
    size_t at = op.find('@');
    if (at == std::string::npos) continue;
    const std::string what = op.substr(0, at);
    const std::string node = op.substr(at + 1);
    for (size_t i = 0; i < n; ++i) {
      if (m.def.nodes[i].id != node || m.nodes[i].state != "FAILED") continue;
      if (m.state.status != "RUNNING" && m.state.status != "FAILED") continue;
      if (what == "retry" && m.def.nodes[i].kind != WorkflowNodeKind::kDecision) {
        m.nodes[i].retries_used = 0;
        m.nodes[i].error.clear();
        m.nodes[i].ended_ms = 0;
        if (m.def.nodes[i].kind == WorkflowNodeKind::kJob) {
          StartJobNode(m, i, m.nodes[i].attempt + 1);
        } else {
          StartNestedNode(m, i, m.nodes[i].attempt + 1);
        }
      } else if (what == "succeed") {
        m.nodes[i].state = "SUCCEEDED";
        m.nodes[i].error = "marked succeeded by an operator (was: " + m.nodes[i].error + ")";
        m.nodes[i].ended_ms = m.now_ms;
        m.node_changed[i] = true;
      } else {
        continue;
      }
      if (m.state.status == "FAILED") {
        m.state.status = "RUNNING";
        m.state.message.clear();
        m.state.ended_ms = 0;
        m.state_changed = true;
      }
    }
  }
  if (m.state.status == "RUNNING") {
    if (m.def.max_run_time_seconds > 0) {
      const int64_t deadline = m.header.created_ms + m.def.max_run_time_seconds * 1000;
      if (m.now_ms >= deadline) {
        m.state.status = "TIMEOUT";
        m.state.message =
            fmt::format("ran longer than maxRunTimeSeconds ({})", m.def.max_run_time_seconds);
        m.state.ended_ms = m.now_ms;
        m.state_changed = true;
        CancelRunningNodes(m);
      } else {
        ArmLook(name, id, Clock::WallTime(std::chrono::milliseconds(deadline)));
      }
    }
  }
  if (m.state.status == "RUNNING") Advance(m);

  std::vector<TransactionOp> ops;
  if (m.state_changed) {
    ops.push_back(m.fresh ? TransactionOp::Create(StatePath(name, id), ToJson(m.state))
                          : TransactionOp::SetData(StatePath(name, id), ToJson(m.state)));
  }
  for (size_t i = 0; i < n; ++i) {
    if (!m.node_changed[i]) continue;
    const std::string key = NodePath(name, id, m.def.nodes[i].id);
    const bool exists = !m.fresh && Read(key).ok();
    ops.push_back(exists ? TransactionOp::SetData(key, ToJson(m.nodes[i]))
                         : TransactionOp::Create(key, ToJson(m.nodes[i])));
  }
  if (m.fresh) {
    ops.insert(ops.begin() + 1, TransactionOp::Create(NodesPath(name, id), ""));
  }
  for (TransactionOp& op : m.ops) ops.push_back(std::move(op));
  if (!Commit(name, id, std::move(ops))) return;
  // A running job node's runners: their loss is noticed as it happens (WatchJob).
  std::set<std::string> running_jobs;
  for (size_t i = 0; i < n; ++i) {
    if (m.def.nodes[i].kind == WorkflowNodeKind::kJob && m.state.status == "RUNNING" &&
        m.nodes[i].state == "RUNNING") {
      running_jobs.insert(m.def.nodes[i].job);
    }
  }
  for (const WorkflowNode& node : m.def.nodes) {
    if (node.kind != WorkflowNodeKind::kJob) continue;
    if (running_jobs.count(node.job) > 0) {
      WatchJob(node.job, name, id);
    } else if (auto users = job_users_.find(node.job); users != job_users_.end()) {
      users->second.erase({name, id});
    }
  }
  if (m.wake_at_ms > 0) {
    ArmLook(name, id, Clock::WallTime(std::chrono::milliseconds(m.wake_at_ms)));
  }
  if (m.state_changed && IsTerminalInstanceStatus(m.state.status)) {
    log_("INFO", fmt::format("workflow '{}': instance {} {}{}", name, id, m.state.status,
                             m.state.message.empty() ? "" : ": " + m.state.message));
    Retention(name, m.def.retention);
    // A queued instance may start now.
    for (const std::string& other : Children(InstancesPath(name))) {
      if (!Read(StatePath(name, other)).ok()) dirty_instances_.emplace(name, other);
    }
    Schedule();
  }
}

bool Coordinator::EdgeLive(const Model& m, size_t from, const std::string& to) const {
  const NodeRecord& u = m.nodes[from];
  const WorkflowNode& node = m.def.nodes[from];
  const bool passes = u.state == "SUCCEEDED" || (u.state == "FAILED" && node.allow_failure) ||
                      (u.state == "SKIPPED" && u.skip == "disabled");
  if (!passes) return false;
  if (node.kind != WorkflowNodeKind::kDecision || u.skip == "disabled") return true;
  for (const WorkflowEdge& e : m.def.edges) {
    if (e.from == node.id && e.to == to) return !e.when || *e.when == u.result;
  }
  return false;
}

void Coordinator::Advance(Model& m) {
  const size_t n = m.def.nodes.size();
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < n; ++i) index[m.def.nodes[i].id] = i;
  std::vector<std::vector<size_t>> ups(n);
  for (const WorkflowEdge& e : m.def.edges) ups[index[e.to]].push_back(index[e.from]);
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t i = 0; i < n; ++i) {
      const WorkflowNode& node = m.def.nodes[i];
      NodeRecord& rec = m.nodes[i];
      if (m.started.count(i) > 0) continue;
      if (rec.state == "RUNNING" && node.kind == WorkflowNodeKind::kWorkflow) {
        // The nested instance's end ends the node.
        const std::string child = rec.expected.empty() ? "" : rec.expected[0];
        auto child_state = Read(StatePath(node.workflow, child));
        if (!child_state.ok()) {
          if (child_state.status().code() == StatusCode::kNotFound &&
              !Read(InstancePath(node.workflow, child)).ok()) {
            rec.state = "FAILED";
            rec.error = fmt::format("nested instance {} is gone", child);
            rec.ended_ms = m.now_ms;
            m.node_changed[i] = changed = true;
          }
          continue;
        }
        auto cs = StateFromJson(*child_state);
        if (!cs.ok() || !IsTerminalInstanceStatus(cs->status)) continue;
        rec.result = cs->status;
        rec.ended_ms = m.now_ms;
        if (cs->status == "SUCCEEDED") {
          rec.state = "SUCCEEDED";
          rec.context_json = cs->context_json;
          m.state.context_json = MergeContext(m.state.context_json, cs->context_json);
          m.state_changed = true;
        } else {
          rec.state = "FAILED";
          rec.error = fmt::format("nested instance {} {}{}", child, cs->status,
                                  cs->message.empty() ? "" : ": " + cs->message);
        }
        m.node_changed[i] = changed = true;
        continue;
      }
      if (rec.state == "RUNNING" && node.kind == WorkflowNodeKind::kJob) {
        if (rec.retry_at_ms > 0) {
          if (m.now_ms >= rec.retry_at_ms) {
            StartJobNode(m, i, rec.attempt + 1);
            changed = true;
          } else if (m.wake_at_ms == 0 || rec.retry_at_ms < m.wake_at_ms) {
            m.wake_at_ms = rec.retry_at_ms;
          }
          continue;
        }
        std::string error, result, context;
        switch (CheckRuns(m, i, &error, &result, &context)) {
          case RunCheck::kPending:
            break;
          case RunCheck::kSucceeded:
            rec.state = "SUCCEEDED";
            rec.result = result;
            rec.context_json = context;
            rec.ended_ms = m.now_ms;
            m.state.context_json = MergeContext(m.state.context_json, context);
            m.state_changed = m.node_changed[i] = changed = true;
            break;
          case RunCheck::kFailed:
            rec.result = result;
            rec.context_json = context;
            if (rec.retries_used < node.retries) {
              ++rec.retries_used;
              rec.error = error;
              if (node.retry_interval_seconds > 0) {
                rec.retry_at_ms = m.now_ms + node.retry_interval_seconds * 1000LL;
                if (m.wake_at_ms == 0 || rec.retry_at_ms < m.wake_at_ms) {
                  m.wake_at_ms = rec.retry_at_ms;
                }
                m.node_changed[i] = true;
              } else {
                StartJobNode(m, i, rec.attempt + 1);
              }
            } else {
              rec.state = "FAILED";
              rec.error = error;
              rec.ended_ms = m.now_ms;
              if (node.allow_failure) {
                m.state.context_json = MergeContext(m.state.context_json, context);
                m.state_changed = true;
              }
              m.node_changed[i] = true;
            }
            changed = true;
            break;
          case RunCheck::kNeverTaken:
            // Nothing ran: offered again to the live instances, not counted as a loss.
            log_("INFO", fmt::format("workflow '{}' instance {} node {}: {}; offered "
                                     "again",
                                     m.name, m.id, node.id, error));
            StartJobNode(m, i, rec.attempt + 1);
            changed = true;
            break;
          case RunCheck::kLost:
            if (rec.lost < kMaxLostRestarts) {
              ++rec.lost;
              StartJobNode(m, i, rec.attempt + 1);
            } else {
              rec.state = "FAILED";
              rec.error = error;
              rec.ended_ms = m.now_ms;
              m.node_changed[i] = true;
            }
            changed = true;
            break;
        }
        continue;
      }
      if (rec.state != "WAITING") continue;
      bool ready = true;
      bool blocked = false;
      int live = 0;
      for (size_t u : ups[i]) {
        const NodeRecord& up = m.nodes[u];
        if (!NodeTerminal(up.state)) ready = false;
        if (up.state == "FAILED" && !m.def.nodes[u].allow_failure) blocked = true;
        if (EdgeLive(m, u, node.id)) ++live;
      }
      if (!ready || blocked) continue;
      changed = m.node_changed[i] = true;
      rec.started_ms = m.now_ms;
      if (!ups[i].empty() && live == 0) {
        rec.state = "SKIPPED";
        rec.skip = "branch";
        rec.ended_ms = m.now_ms;
        continue;
      }
      if (node.disabled) {
        rec.state = "SKIPPED";
        rec.skip = "disabled";
        rec.ended_ms = m.now_ms;
        continue;
      }
      switch (node.kind) {
        case WorkflowNodeKind::kDecision: {
          auto value = EvaluateDecision(node.expression, m.state.context_json);
          rec.attempt = 1;
          rec.ended_ms = m.now_ms;
          if (value.ok()) {
            rec.state = "SUCCEEDED";
            rec.result = *value;
          } else {
            rec.state = "FAILED";
            rec.error = value.status().message();
          }
          break;
        }
        case WorkflowNodeKind::kJob:
          StartJobNode(m, i, 1);
          break;
        case WorkflowNodeKind::kWorkflow:
          StartNestedNode(m, i, 1);
          break;
      }
    }
  }
  // The instance's end: a failure that is not allowed ends it now; else all nodes done.
  bool all = true;
  for (size_t i = 0; i < n; ++i) {
    const NodeRecord& rec = m.nodes[i];
    if (rec.state == "FAILED" && !m.def.nodes[i].allow_failure) {
      m.state.status = "FAILED";
      m.state.message = fmt::format("node '{}' failed: {}", m.def.nodes[i].id, rec.error);
      m.state.ended_ms = m.now_ms;
      m.state_changed = true;
      return;
    }
    if (!NodeTerminal(rec.state)) all = false;
  }
  if (all) {
    m.state.status = "SUCCEEDED";
    m.state.ended_ms = m.now_ms;
    m.state_changed = true;
  }
}

void Coordinator::StartJobNode(Model& m, size_t index, int attempt) {
  const WorkflowNode& node = m.def.nodes[index];
  NodeRecord& rec = m.nodes[index];
  m.node_changed[index] = true;
  m.started.insert(index);
  rec.attempt = attempt;
  rec.retry_at_ms = 0;
  if (rec.started_ms == 0) rec.started_ms = m.now_ms;
  auto instances = registry_.GetChildrenKeysDirectly("/" + node.job + "/instances");
  if (!instances.ok() || instances->empty()) {
    rec.state = "FAILED";
    rec.error = fmt::format("job '{}' has no live instance", node.job);
    rec.ended_ms = m.now_ms;
    return;
  }
  // A Java ElasticJob instance (no `runtime/{id}` beside its instance node: every C++
  // instance writes both in one multi-op) never takes a run request: its items would not run.
  auto runtimes = registry_.GetChildrenKeysDirectly("/" + node.job + "/runtime");
  std::vector<std::string> java;
  for (const std::string& i : *instances) {
    if (!runtimes.ok() || std::find(runtimes->begin(), runtimes->end(), i) == runtimes->end()) {
      java.push_back(i);
    }
  }
  if (!java.empty()) {
    std::sort(java.begin(), java.end());
    rec.state = "FAILED";
    rec.error = fmt::format(
        "job '{}' has Java ElasticJob instances ({}): they never run a workflow node's items "
        "(a node's job must run on elasticjob-cpp instances only)",
        node.job, fmt::join(java, ", "));
    rec.ended_ms = m.now_ms;
    return;
  }
  std::sort(instances->begin(), instances->end());
  rec.state = "RUNNING";
  rec.expected = *instances;
  // What the node's runs receive: every finished ancestor's result and the context now.
  std::map<std::string, size_t> idx;
  for (size_t i = 0; i < m.def.nodes.size(); ++i) idx[m.def.nodes[i].id] = i;
  std::set<size_t> ancestors;
  std::vector<size_t> todo = {index};
  while (!todo.empty()) {
    size_t v = todo.back();
    todo.pop_back();
    for (const WorkflowEdge& e : m.def.edges) {
      if (e.to != m.def.nodes[v].id) continue;
      size_t u = idx[e.from];
      if (ancestors.insert(u).second) todo.push_back(u);
    }
  }
  nlohmann::json upstream = nlohmann::json::object();
  for (size_t u : ancestors) {
    const NodeRecord& up = m.nodes[u];
    if (up.state == "SUCCEEDED" || up.state == "FAILED") upstream[m.def.nodes[u].id] = up.result;
  }
  Envelope envelope;
  envelope.workflow = m.name;
  envelope.instance = m.id;
  envelope.node = node.id;
  envelope.attempt = attempt;
  envelope.param = node.param;
  envelope.upstream_json = upstream.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  envelope.context_json = m.state.context_json;
  const std::string value = EncodeEnvelope(envelope);
  // Transactions create no parents: those the runners write under, and the requests parent.
  auto planned = [&m](const std::string& key) {
    for (const TransactionOp& op : m.ops) {
      if (op.key == key) return true;
    }
    return false;
  };
  for (const std::string& key :
       {RunsPath(m.name, m.id, node.id), ReportsPath(m.name, m.id, node.id)}) {
    if (!planned(key) && !Read(key).ok()) m.ops.push_back(TransactionOp::Create(key, ""));
  }
  // One request per live instance: it takes its own (docs/workflows.md "How a node runs").
  const std::string parent = RunRequestsPath(node.job);
  if (!planned(parent) && request_parents_.count(node.job) == 0) {
    if (registry_.GetDirectly(parent).ok()) {
      request_parents_.insert(node.job);
    } else {
      m.ops.push_back(TransactionOp::Create(parent, ""));
    }
  }
  for (const std::string& instance : *instances) {
    m.ops.push_back(TransactionOp::Create(
        parent + "/" + RunRequestName(instance, m.id, node.id, attempt), value));
  }
}

void Coordinator::StartNestedNode(Model& m, size_t index, int attempt) {
  const WorkflowNode& node = m.def.nodes[index];
  NodeRecord& rec = m.nodes[index];
  m.node_changed[index] = true;
  m.started.insert(index);
  rec.attempt = attempt;
  if (rec.started_ms == 0) rec.started_ms = m.now_ms;
  auto definition = Read(DefinitionPath(node.workflow));
  if (!definition.ok()) {
    rec.state = "FAILED";
    rec.error = fmt::format("workflow '{}' not found", node.workflow);
    rec.ended_ms = m.now_ms;
    return;
  }
  // The child's id follows from the parent's: the multi-op that starts the node creates it,
  // and a coordinator that takes over finds it.
  uint64_t hash = 1469598103934665603ULL;  // FNV-1a
  for (char c : fmt::format("{}/{}/{}", m.id, node.id, attempt)) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  const std::string child = fmt::format("{}-n{:016x}", node.workflow, hash);
  InstanceHeader header;
  header.created_ms = m.now_ms;
  header.trigger = "workflow";
  header.context_json = m.state.context_json;
  header.definition_yaml = *definition;
  header.parent = fmt::format("{}/{}", m.name, m.id);
  if (!Read(InstancesPath(node.workflow)).ok()) {
    m.ops.push_back(TransactionOp::Create(InstancesPath(node.workflow), ""));
  }
  m.ops.push_back(TransactionOp::Create(InstancePath(node.workflow, child), ToJson(header)));
  rec.state = "RUNNING";
  rec.expected = {child};
}

void Coordinator::CancelRunningNodes(Model& m) {
  for (size_t i = 0; i < m.def.nodes.size(); ++i) {
    const WorkflowNode& node = m.def.nodes[i];
    const NodeRecord& rec = m.nodes[i];
    if (node.kind != WorkflowNodeKind::kJob || rec.state != "RUNNING") continue;
    // A runner whose run mark is there took its request: a cancel under the request's name.
    // One that has not taken it yet: the request is withdrawn.
    const std::vector<std::string> runs = Children(RunsPath(m.name, m.id, node.id));
    Envelope envelope;
    envelope.workflow = m.name;
    envelope.instance = m.id;
    envelope.node = node.id;
    envelope.attempt = rec.attempt;
    const std::string value = EncodeCancel(envelope);
    const std::string parent = RunRequestsPath(node.job);
    std::optional<std::vector<std::string>> pending;
    for (const std::string& runner : rec.expected) {
      const std::string name = RunRequestName(runner, m.id, node.id, rec.attempt);
      if (std::binary_search(runs.begin(), runs.end(), fmt::format("{}@{}", rec.attempt, runner))) {
        m.ops.push_back(TransactionOp::Create(parent + "/" + name, value));
        continue;
      }
      if (!pending) {
        auto listed = registry_.GetChildrenKeysDirectly(parent);
        pending = listed.ok() ? *listed : std::vector<std::string>{};
      }
      if (std::find(pending->begin(), pending->end(), name) != pending->end()) {
        m.ops.push_back(TransactionOp::Delete(parent + "/" + name));
      }
    }
  }
}

Coordinator::RunCheck Coordinator::CheckRuns(Model& m, size_t index, std::string* error,
                                             std::string* result, std::string* context) {
  const WorkflowNode& node = m.def.nodes[index];
  const NodeRecord& rec = m.nodes[index];
  const std::string reports_path = ReportsPath(m.name, m.id, node.id);
  const std::string runs_path = RunsPath(m.name, m.id, node.id);
  const std::vector<std::string> reports = Children(reports_path);
  const std::vector<std::string> runs = Children(runs_path);
  bool pending = false;
  std::vector<std::string> lost;
  std::vector<std::string> untaken;  // gone before they took their request
  std::set<int> covered;             // the items the reports say ran
  std::string failure;
  std::map<int, std::string> results;
  std::string merged = "{}";
  for (const std::string& runner : rec.expected) {
    const std::string name = fmt::format("{}@{}", rec.attempt, runner);
    if (std::binary_search(reports.begin(), reports.end(), name)) {
      auto text = Read(reports_path + "/" + name);
      if (!text.ok()) {
        // Listed before its value reached the cache: its own event comes once it has.
        pending = true;
        continue;
      }
      auto report = ReportFromJson(*text);
      if (!report.ok()) {
        if (failure.empty()) failure = fmt::format("{}: {}", runner, report.status().message());
        continue;
      }
      if (!report->ok && failure.empty()) {
        failure = fmt::format("on {}: {}", runner, report->error);
      }
      for (auto& [item, r] : report->results) results[item] = r;
      covered.insert(report->ran.begin(), report->ran.end());
      merged = MergeContext(merged, report->context_json);
      continue;
    }
    if (std::binary_search(runs.begin(), runs.end(), name)) {
      pending = true;
      continue;
    }
    // Neither running nor done: its request is still to be taken, unless the instance went.
    auto alive = registry_.GetDirectly("/" + node.job + "/instances/" + runner);
    if (alive.ok() || alive.status().code() != StatusCode::kNotFound) {
      pending = true;
      continue;
    }
    const std::string request =
        RunRequestsPath(node.job) + "/" + RunRequestName(runner, m.id, node.id, rec.attempt);
    if (registry_.GetDirectly(request).ok()) {
      untaken.push_back(runner);  // decided below, once the others have reported
      continue;
    }
    lost.push_back(runner);
  }
  if (lost.empty() && !untaken.empty()) {
    if (pending) return RunCheck::kPending;
    // Gone without taking its request: when the others' runs covered every item of the job,
    // nothing of the node was left to it (the request is withdrawn and their reports decide);
    // else the node is offered again (kNeverTaken, below).
    if (CoversEveryItem(node.job, covered)) {
      for (const std::string& runner : untaken) {
        m.ops.push_back(TransactionOp::Delete(RunRequestsPath(node.job) + "/" +
                                              RunRequestName(runner, m.id, node.id, rec.attempt)));
      }
      NodeRecord& changed = m.nodes[index];
      for (const std::string& runner : untaken) std::erase(changed.expected, runner);
      m.node_changed[index] = true;
      untaken.clear();
    }
  }
  lost.insert(lost.end(), untaken.begin(), untaken.end());
  if (!lost.empty()) {
    // A runner gone before it took its request: the request is withdrawn (the new attempt
    // offers the run to the live instances), and its items never ran there.
    auto requests = registry_.GetChildrenKeysDirectly(RunRequestsPath(node.job));
    bool ran = false;
    for (const std::string& runner : lost) {
      const std::string name = RunRequestName(runner, m.id, node.id, rec.attempt);
      if (requests.ok() && std::find(requests->begin(), requests->end(), name) != requests->end()) {
        m.ops.push_back(TransactionOp::Delete(RunRequestsPath(node.job) + "/" + name));
      } else {
        ran = true;
      }
    }
    *error = fmt::format("instance {} of job '{}' went before it {} attempt {}", lost[0], node.job,
                         ran ? "reported" : "took", rec.attempt);
    return ran ? RunCheck::kLost : RunCheck::kNeverTaken;
  }
  if (pending) return RunCheck::kPending;
  if (results.size() == 1) {
    *result = results.begin()->second;
  } else if (!results.empty()) {
    nlohmann::json all = nlohmann::json::object();
    for (const auto& [item, r] : results) all[std::to_string(item)] = r;
    *result = all.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  if (result->size() > kWorkflowResultLimit) result->resize(kWorkflowResultLimit);
  *context = merged;
  if (!failure.empty()) {
    *error = failure;
    return RunCheck::kFailed;
  }
  return RunCheck::kSucceeded;
}

bool Coordinator::CoversEveryItem(const std::string& job, const std::set<int>& covered) {
  auto config = registry_.GetDirectly("/" + job + "/config");
  if (!config.ok()) return false;
  auto parsed = ConfigFromYaml(*config);
  if (!parsed.ok()) return false;
  for (int item = 0; item < parsed->sharding_total_count; ++item) {
    if (covered.count(item) == 0) return false;
  }
  return true;
}

void Coordinator::WatchJob(const std::string& job, const std::string& name, const std::string& id) {
  job_users_[job].emplace(name, id);
  {
    MutexLock lock(&mu_);
    if (stopped_ || job_watches_.count(job) > 0) return;
  }
  auto watch = registry_.Watch("/" + job + "/instances", strand_, [this, job](const TreeEvent& e) {
    if (e.type != TreeEvent::Type::kDeleted || e.key.ends_with("/instances")) return;
    // An instance of the job went: the instances whose nodes it may have been asked to run
    // look again now (a request it never took is offered to the live ones).
    auto users = job_users_.find(job);
    if (users == job_users_.end()) return;
    for (const auto& key : users->second) dirty_instances_.insert(key);
    job_users_.erase(users);  // the looks note again what still runs
    Schedule();
  });
  if (!watch.ok()) {
    log_("WARN", fmt::format("workflow coordinator: watching job '{}': {}", job,
                             watch.status().ToString()));
    return;
  }
  MutexLock lock(&mu_);
  if (!stopped_) job_watches_.emplace(job, std::move(*watch));
}

void Coordinator::Retention(const std::string& name, int keep) {
  std::vector<std::pair<int64_t, std::string>> finished;
  for (const std::string& id : Children(InstancesPath(name))) {
    auto state = Read(StatePath(name, id));
    if (!state.ok()) continue;
    auto s = StateFromJson(*state);
    if (!s.ok() || !IsTerminalInstanceStatus(s->status)) continue;
    auto header = Read(InstancePath(name, id));
    auto h = header.ok() ? HeaderFromJson(*header) : Result<InstanceHeader>(header.status());
    finished.emplace_back(h.ok() ? h->created_ms : 0, id);
  }
  if (static_cast<int>(finished.size()) <= keep) return;
  // Oldest first (by request time; nested instances' ids are not sequential).
  std::sort(finished.begin(), finished.end());
  std::vector<std::string> removed;
  for (size_t i = 0; i + keep < finished.size(); ++i) {
    if (Status s = registry_.Remove(InstancePath(name, finished[i].second)); !s.ok()) {
      log_("WARN", fmt::format("workflow '{}': removing instance {}: {}", name, finished[i].second,
                               s.ToString()));
      continue;
    }
    removed.push_back(finished[i].second);
  }
  RemoveLeftRequests(name, removed);
}

void Coordinator::RemoveLeftRequests(const std::string& name,
                                     const std::vector<std::string>& instances) {
  // A runner takes its requests (runs and cancels) as it sees them; one that died first
  // leaves them. Once its instance is removed nobody will: they go with it.
  if (instances.empty()) return;
  auto led = workflows_.find(name);
  if (led == workflows_.end()) return;
  auto def = WorkflowFromYaml(led->second.definition_yaml);
  if (!def.ok()) return;
  std::set<std::string> jobs;
  for (const WorkflowNode& node : def->nodes) {
    if (node.kind == WorkflowNodeKind::kJob) jobs.insert(node.job);
  }
  for (const std::string& job : jobs) {
    auto requests = registry_.GetChildrenKeysDirectly(RunRequestsPath(job));
    if (!requests.ok()) continue;
    for (const std::string& request : *requests) {
      for (const std::string& id : instances) {
        const std::string part =
            std::string(1, kRunRequestSeparator) + id + std::string(1, kRunRequestSeparator);
        if (request.find(part) != std::string::npos) {
          (void)registry_.Remove(RunRequestsPath(job) + "/" + request);
          break;
        }
      }
    }
  }
}

}  // namespace elasticjob::workflow

namespace elasticjob {

std::unique_ptr<WorkflowCoordinator> NewWorkflowCoordinator(RegistryCenter& registry,
                                                            Executor& executor,
                                                            WorkflowCoordinatorOptions options) {
  return std::make_unique<workflow::Coordinator>(registry, executor, std::move(options));
}

}  // namespace elasticjob
