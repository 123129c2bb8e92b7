#include "elasticjob/workflow/workflow_definition.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <set>

#include "elasticjob/schedule/cron_expression.h"
#include "elasticjob/schedule/time_zone.h"

namespace elasticjob {

const WorkflowNode* WorkflowDefinition::FindNode(std::string_view id) const {
  for (const WorkflowNode& n : nodes) {
    if (n.id == id) return &n;
  }
  return nullptr;
}

namespace {

const char* KindName(WorkflowNodeKind kind) {
  switch (kind) {
    case WorkflowNodeKind::kJob:
      return "job";
    case WorkflowNodeKind::kDecision:
      return "decision";
    case WorkflowNodeKind::kWorkflow:
      return "workflow";
  }
  return "job";
}

Result<std::string> Text(const YAML::Node& node, const std::string& where) {
  if (!node.IsScalar()) return InvalidArgument(fmt::format("{}: expected a text value", where));
  return node.as<std::string>();
}

Result<int64_t> Integer(const YAML::Node& node, const std::string& where, int64_t min) {
  if (!node.IsScalar()) return InvalidArgument(fmt::format("{}: expected an integer", where));
  const std::string text = node.as<std::string>();
  int64_t value = 0;
  try {
    size_t used = 0;
    value = std::stoll(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
  } catch (const std::exception&) {
    return InvalidArgument(fmt::format("{}: expected an integer, got '{}'", where, text));
  }
  if (value < min) {
    return InvalidArgument(fmt::format("{}: must be at least {}, got {}", where, min, value));
  }
  return value;
}

Result<bool> Boolean(const YAML::Node& node, const std::string& where) {
  if (!node.IsScalar()) return InvalidArgument(fmt::format("{}: expected true or false", where));
  const std::string text = node.as<std::string>();
  if (text == "true") return true;
  if (text == "false") return false;
  return InvalidArgument(fmt::format("{}: expected true or false, got '{}'", where, text));
}

#define WF_ASSIGN(lhs, expr)              \
  do {                                    \
    auto wf_r = (expr);                   \
    if (!wf_r.ok()) return wf_r.status(); \
    lhs = *std::move(wf_r);               \
  } while (0)

Result<WorkflowNode> NodeFrom(const YAML::Node& y, size_t index) {
  const std::string at = fmt::format("nodes[{}]", index);
  if (!y.IsMap()) return InvalidArgument(at + ": expected a map");
  WorkflowNode n;
  if (!y["id"]) return InvalidArgument(at + ".id: missing");
  WF_ASSIGN(n.id, Text(y["id"], at + ".id"));
  const std::string where = fmt::format("node '{}'", n.id);
  if (y["kind"]) {
    std::string kind;
    WF_ASSIGN(kind, Text(y["kind"], where + ": kind"));
    if (kind == "job") {
      n.kind = WorkflowNodeKind::kJob;
    } else if (kind == "decision") {
      n.kind = WorkflowNodeKind::kDecision;
    } else if (kind == "workflow") {
      n.kind = WorkflowNodeKind::kWorkflow;
    } else {
      return InvalidArgument(
          fmt::format("{}: kind: expected job, decision or workflow, got '{}'", where, kind));
    }
  }
  if (y["job"]) WF_ASSIGN(n.job, Text(y["job"], where + ": job"));
  if (y["param"]) {
    std::string p;
    WF_ASSIGN(p, Text(y["param"], where + ": param"));
    n.param = std::move(p);
  }
  if (y["expression"]) WF_ASSIGN(n.expression, Text(y["expression"], where + ": expression"));
  if (y["workflow"]) WF_ASSIGN(n.workflow, Text(y["workflow"], where + ": workflow"));
  if (y["allowFailure"])
    WF_ASSIGN(n.allow_failure, Boolean(y["allowFailure"], where + ": allowFailure"));
  if (y["disabled"]) WF_ASSIGN(n.disabled, Boolean(y["disabled"], where + ": disabled"));
  if (y["retries"]) {
    int64_t v = 0;
    WF_ASSIGN(v, Integer(y["retries"], where + ": retries", 0));
    if (v > 100) return InvalidArgument(fmt::format("{}: retries: at most 100, got {}", where, v));
    n.retries = static_cast<int>(v);
  }
  if (y["retryIntervalSeconds"]) {
    int64_t v = 0;
    WF_ASSIGN(v, Integer(y["retryIntervalSeconds"], where + ": retryIntervalSeconds", 0));
    if (v > 86400) {
      return InvalidArgument(
          fmt::format("{}: retryIntervalSeconds: at most 86400, got {}", where, v));
    }
    n.retry_interval_seconds = static_cast<int>(v);
  }
  return n;
}

}  // namespace

Result<WorkflowDefinition> WorkflowFromYaml(std::string_view yaml) {
  if (yaml.size() > kWorkflowYamlLimit) {
    return InvalidArgument(fmt::format("workflow: {} bytes, more than the limit of {}", yaml.size(),
                                       kWorkflowYamlLimit));
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return InvalidArgument(fmt::format("workflow: not YAML: {}", e.what()));
  }
  if (!root.IsMap()) return InvalidArgument("workflow: expected a map with name and nodes");
  WorkflowDefinition d;
  try {
    if (!root["name"]) return InvalidArgument("name: missing");
    WF_ASSIGN(d.name, Text(root["name"], "name"));
    if (root["cron"] && !root["cron"].IsNull()) {
      std::string c;
      WF_ASSIGN(c, Text(root["cron"], "cron"));
      if (!c.empty()) d.cron = std::move(c);
    }
    if (root["timeZone"] && !root["timeZone"].IsNull()) {
      std::string z;
      WF_ASSIGN(z, Text(root["timeZone"], "timeZone"));
      if (!z.empty()) d.time_zone = std::move(z);
    }
    if (root["description"]) WF_ASSIGN(d.description, Text(root["description"], "description"));
    if (root["maxRunTimeSeconds"]) {
      WF_ASSIGN(d.max_run_time_seconds, Integer(root["maxRunTimeSeconds"], "maxRunTimeSeconds", 0));
    }
    if (root["overlap"]) {
      std::string o;
      WF_ASSIGN(o, Text(root["overlap"], "overlap"));
      if (o == "skip") {
        d.overlap = WorkflowOverlap::kSkip;
      } else if (o == "queue") {
        d.overlap = WorkflowOverlap::kQueue;
      } else if (o == "parallel") {
        d.overlap = WorkflowOverlap::kParallel;
      } else {
        return InvalidArgument(
            fmt::format("overlap: expected skip, queue or parallel, got '{}'", o));
      }
    }
    if (root["maxConcurrent"]) {
      int64_t c = 0;
      WF_ASSIGN(c, Integer(root["maxConcurrent"], "maxConcurrent", 0));
      if (c > 100000) {
        return InvalidArgument(fmt::format("maxConcurrent: at most 100000, got {}", c));
      }
      if (c > 0 && d.overlap != WorkflowOverlap::kParallel) {
        return InvalidArgument(fmt::format("maxConcurrent: {} needs overlap: parallel", c));
      }
      d.max_concurrent = static_cast<int>(c);
    }
    if (root["retention"]) {
      int64_t r = 0;
      WF_ASSIGN(r, Integer(root["retention"], "retention", 1));
      if (r > 10000) return InvalidArgument(fmt::format("retention: at most 10000, got {}", r));
      d.retention = static_cast<int>(r);
    }
    const YAML::Node nodes = root["nodes"];
    if (nodes && !nodes.IsNull()) {
      if (!nodes.IsSequence()) return InvalidArgument("nodes: expected a list");
      for (size_t i = 0; i < nodes.size(); ++i) {
        WorkflowNode n;
        WF_ASSIGN(n, NodeFrom(nodes[i], i));
        d.nodes.push_back(std::move(n));
      }
    }
    const YAML::Node edges = root["edges"];
    if (edges && !edges.IsNull()) {
      if (!edges.IsSequence()) return InvalidArgument("edges: expected a list");
      for (size_t i = 0; i < edges.size(); ++i) {
        const std::string at = fmt::format("edges[{}]", i);
        const YAML::Node& e = edges[i];
        if (!e.IsMap()) return InvalidArgument(at + ": expected a map with from and to");
        WorkflowEdge edge;
        if (!e["from"]) return InvalidArgument(at + ".from: missing");
        if (!e["to"]) return InvalidArgument(at + ".to: missing");
        WF_ASSIGN(edge.from, Text(e["from"], at + ".from"));
        WF_ASSIGN(edge.to, Text(e["to"], at + ".to"));
        if (e["when"]) {
          std::string w;
          WF_ASSIGN(w, Text(e["when"], at + ".when"));
          edge.when = std::move(w);
        }
        d.edges.push_back(std::move(edge));
      }
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument(fmt::format("workflow: {}", e.what()));
  }
  return d;
}

std::string_view WorkflowOverlapName(WorkflowOverlap overlap) {
  switch (overlap) {
    case WorkflowOverlap::kQueue:
      return "queue";
    case WorkflowOverlap::kParallel:
      return "parallel";
    case WorkflowOverlap::kSkip:
      break;
  }
  return "skip";
}

std::string WorkflowToYaml(const WorkflowDefinition& d) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << d.name;
  if (d.cron) out << YAML::Key << "cron" << YAML::Value << YAML::DoubleQuoted << *d.cron;
  if (d.time_zone) out << YAML::Key << "timeZone" << YAML::Value << *d.time_zone;
  if (!d.description.empty()) out << YAML::Key << "description" << YAML::Value << d.description;
  if (d.max_run_time_seconds > 0) {
    out << YAML::Key << "maxRunTimeSeconds" << YAML::Value << d.max_run_time_seconds;
  }
  out << YAML::Key << "overlap" << YAML::Value << std::string(WorkflowOverlapName(d.overlap));
  if (d.max_concurrent > 0) {
    out << YAML::Key << "maxConcurrent" << YAML::Value << d.max_concurrent;
  }
  out << YAML::Key << "retention" << YAML::Value << d.retention;
  out << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq;
  for (const WorkflowNode& n : d.nodes) {
    out << YAML::BeginMap;
    out << YAML::Key << "id" << YAML::Value << n.id;
    if (n.kind != WorkflowNodeKind::kJob)
      out << YAML::Key << "kind" << YAML::Value << KindName(n.kind);
    if (!n.job.empty()) out << YAML::Key << "job" << YAML::Value << n.job;
    if (n.param) out << YAML::Key << "param" << YAML::Value << YAML::DoubleQuoted << *n.param;
    if (!n.expression.empty()) {
      out << YAML::Key << "expression" << YAML::Value << YAML::DoubleQuoted << n.expression;
    }
    if (!n.workflow.empty()) out << YAML::Key << "workflow" << YAML::Value << n.workflow;
    if (n.allow_failure) out << YAML::Key << "allowFailure" << YAML::Value << true;
    if (n.disabled) out << YAML::Key << "disabled" << YAML::Value << true;
    if (n.retries > 0) out << YAML::Key << "retries" << YAML::Value << n.retries;
    if (n.retry_interval_seconds > 0) {
      out << YAML::Key << "retryIntervalSeconds" << YAML::Value << n.retry_interval_seconds;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  if (!d.edges.empty()) {
    out << YAML::Key << "edges" << YAML::Value << YAML::BeginSeq;
    for (const WorkflowEdge& e : d.edges) {
      out << YAML::BeginMap;
      out << YAML::Key << "from" << YAML::Value << e.from;
      out << YAML::Key << "to" << YAML::Value << e.to;
      if (e.when) out << YAML::Key << "when" << YAML::Value << YAML::DoubleQuoted << *e.when;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

Status ValidateWorkflow(const WorkflowDefinition& d, const WorkflowJobCheck& check_job) {
  if (d.name.empty() || d.name.find('/') != std::string::npos || d.name == "." || d.name == "..") {
    return InvalidArgument(
        fmt::format("name: expected a non-empty name without '/', got '{}'", d.name));
  }
  if (d.nodes.empty()) return InvalidArgument(fmt::format("workflow '{}': no nodes", d.name));
  if (d.cron) {
    auto c = CronExpression::Parse(*d.cron);
    if (!c.ok()) return InvalidArgument(fmt::format("cron: {}", c.status().message()));
  }
  if (d.time_zone) {
    if (!d.cron) return InvalidArgument("timeZone: only with a cron");
    auto z = TimeZone::Parse(*d.time_zone);
    if (!z.ok()) return InvalidArgument(fmt::format("timeZone: {}", z.status().message()));
  }
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    const WorkflowNode& n = d.nodes[i];
    if (n.id.empty() || n.id.find_first_of("/@\n") != std::string::npos) {
      return InvalidArgument(fmt::format(
          "nodes[{}]: id: expected a name without '/', '@' or a newline, got '{}'", i, n.id));
    }
    if (!index.emplace(n.id, i).second) {
      return InvalidArgument(fmt::format("node '{}': declared twice", n.id));
    }
    switch (n.kind) {
      case WorkflowNodeKind::kJob:
        if (n.job.empty()) return InvalidArgument(fmt::format("node '{}': job: missing", n.id));
        if (check_job && !n.disabled) {
          Status s = check_job(n.job);
          if (!s.ok()) {
            return Status(s.code(),
                          fmt::format("node '{}': job '{}': {}", n.id, n.job, s.message()));
          }
        }
        break;
      case WorkflowNodeKind::kDecision:
        if (n.expression.empty()) {
          return InvalidArgument(fmt::format("node '{}': expression: missing (a decision)", n.id));
        }
        break;
      case WorkflowNodeKind::kWorkflow:
        if (n.workflow.empty()) {
          return InvalidArgument(
              fmt::format("node '{}': workflow: missing (a nested workflow)", n.id));
        }
        if (n.workflow == d.name) {
          return InvalidArgument(
              fmt::format("node '{}': workflow: '{}' nests itself", n.id, n.workflow));
        }
        break;
    }
  }
  std::vector<std::vector<size_t>> out(d.nodes.size());
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t i = 0; i < d.edges.size(); ++i) {
    const WorkflowEdge& e = d.edges[i];
    auto from = index.find(e.from);
    auto to = index.find(e.to);
    if (from == index.end()) {
      return InvalidArgument(
          fmt::format("edges[{}]: from '{}' (to '{}'): no such node", i, e.from, e.to));
    }
    if (to == index.end()) {
      return InvalidArgument(
          fmt::format("edges[{}]: to '{}' (from '{}'): no such node", i, e.to, e.from));
    }
    if (e.from == e.to) {
      return InvalidArgument(fmt::format("node '{}': a cycle: {} -> {}", e.from, e.from, e.to));
    }
    if (!seen.emplace(e.from, e.to).second) {
      return InvalidArgument(fmt::format("edges[{}]: {} -> {} given twice", i, e.from, e.to));
    }
    if (e.when && d.nodes[from->second].kind != WorkflowNodeKind::kDecision) {
      return InvalidArgument(fmt::format(
          "edges[{}]: when: only an edge from a decision node has one ('{}' is not)", i, e.from));
    }
    out[from->second].push_back(to->second);
  }
  // Cycles: a depth-first search; a back edge names the cycle.
  std::vector<int> color(d.nodes.size(), 0);
  std::vector<size_t> stack;
  std::function<Status(size_t)> visit = [&](size_t u) -> Status {
    color[u] = 1;
    stack.push_back(u);
    for (size_t v : out[u]) {
      if (color[v] == 1) {
        std::string path;
        bool on = false;
        for (size_t w : stack) {
          if (w == v) on = true;
          if (on) path += d.nodes[w].id + " -> ";
        }
        path += d.nodes[v].id;
        return InvalidArgument(fmt::format("node '{}': a cycle: {}", d.nodes[v].id, path));
      }
      if (color[v] == 0) {
        if (Status s = visit(v); !s.ok()) return s;
      }
    }
    stack.pop_back();
    color[u] = 2;
    return Status::Ok();
  };
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    if (color[i] == 0) {
      if (Status s = visit(i); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

}  // namespace elasticjob
