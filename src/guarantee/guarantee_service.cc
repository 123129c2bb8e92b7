#include "guarantee/guarantee_service.h"

#include "guarantee/guarantee_node.h"

namespace elasticjob::guarantee {

std::string_view RootOf(Phase phase) {
  return phase == Phase::kStarted ? kStartedRoot : kCompletedRoot;
}

namespace {

std::string_view LatchOf(Phase phase) {
  return phase == Phase::kStarted ? kStartedLatch : kCompletedLatch;
}

}  // namespace

Status GuaranteeService::Register(Phase phase, const std::vector<int>& items) {
  // Persist, not CreateJobNodeIfNeeded: the cache may still show the node of the previous
  // execution, cleared a moment ago by another instance.
  for (int item : items) {
    if (Status s = storage_.FillJobNode(ItemNode(RootOf(phase), item), ""); !s.ok()) return s;
  }
  return Status::Ok();
}

Result<bool> GuaranteeService::IsRegistered(Phase phase, int item) {
  auto value = storage_.GetJobNodeDataDirectly(ItemNode(RootOf(phase), item));
  if (value.ok()) return true;
  if (value.status().code() == StatusCode::kNotFound) return false;
  return value.status();
}

Result<bool> GuaranteeService::IsAll(Phase phase, int total) {
  auto children =
      storage_.registry().GetChildrenKeysDirectly(storage_.path().FullPath(RootOf(phase)));
  if (!children.ok()) {
    if (children.status().code() == StatusCode::kNotFound) return false;
    return children.status();
  }
  return static_cast<int>(children->size()) == total;
}

Status GuaranteeService::Clear(Phase phase) {
  return storage_.RemoveJobNodeIfExisted(RootOf(phase));
}

Result<bool> GuaranteeService::ExecuteInLeaderForLast(Phase phase, int total,
                                                      const std::function<void()>& hook) {
  Status inner = Status::Ok();
  bool ran = false;
  Status s = storage_.ExecuteInLeader(LatchOf(phase), [&] {
    // As ElasticJob's LeaderExecutionCallbackForLast*: the first instance through the latch
    // runs the hook; every one clears, so a late one finds nothing to do.
    auto all = IsAll(phase, total);
    if (!all.ok()) {
      inner = all.status();
    } else if (*all) {
      hook();
      ran = true;
    }
    if (Status c = Clear(phase); !c.ok() && inner.ok()) inner = c;
  });
  if (!s.ok()) return s;
  if (!inner.ok()) return inner;
  return ran;
}

}  // namespace elasticjob::guarantee
