// Fixed-delay schedules (`fixedDelay: 30s`, docs/scheduling.md): the next fire of the job
// comes a delay after its previous fire ended on every instance. Decentralised, through two
// layout extensions under `/{job}/delay` that Java instances ignore:
//   delay/next/{F}         the fire due at F (epoch ms, registry time); one child at a time
//   delay/ended/{id}       ephemeral, value F: instance `id`'s part of fire F is over
// Every instance arms a timer for the child of `delay/next` it sees. When its part of the
// fire ends it writes its `ended` node and checks whether the fire is over: every live
// instance has ended F, no running mark is left (a failover run holds one) and no failover
// item waits for a taker. The instance that finds it over reads the registry's time T and,
// in one multi-op, deletes `delay/next/F` and creates `delay/next/{T + delay}`: the delete
// lets exactly one instance move the job on, however many found it over together.
#include <fmt/format.h>

#include <charconv>

#include "bootstrap/job_runtime.h"
#include "failover/failover_node.h"
#include "infra/log.h"
#include "listener/listener_manager.h"
#include "sharding/sharding_node.h"

namespace elasticjob::bootstrap {

namespace {

std::string NextNode(int64_t fire_ms) {
  return fmt::format("{}/{}", listener::kDelayNextRoot, fire_ms);
}

std::optional<int64_t> ParseMs(std::string_view text) {
  int64_t ms = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (ec != std::errc() || end != text.data() + text.size() || ms < 0) return std::nullopt;
  return ms;
}

int64_t EpochMs(Clock::WallTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace

Status JobRuntime::StartFixedDelay() {
  // The registry's clock against ours, once: fire times are the registry's, timers ours.
  const int64_t before = EpochMs(clock_.WallNow());
  auto registry_now = storage_.GetRegistryCenterTime();
  if (!registry_now.ok()) return registry_now.status().WithContext("fixedDelay: registry time");
  const int64_t offset = *registry_now - (before + EpochMs(clock_.WallNow())) / 2;
  if (Status s = storage_.CreateJobNodeIfNeeded("delay"); !s.ok()) return s;
  // The job's first start: its first fire is now. `delay/next` itself is the lock.
  bool first =
      storage_
          .ExecuteInTransaction({TransactionOp::Create(std::string(listener::kDelayNextRoot), ""),
                                 TransactionOp::Create(NextNode(*registry_now), "")})
          .ok();
  auto children = gated_.GetChildrenKeysDirectly(
      storage_.path().FullPath(std::string(listener::kDelayNextRoot)));
  if (!children.ok()) return children.status().WithContext("fixedDelay: delay/next");
  int64_t next = 0;
  for (const auto& c : *children) next = std::max(next, ParseMs(c).value_or(0));
  bool joined_late = false;
  {
    MutexLock lock(&mu_);
    delay_offset_ms_ = offset;
    delay_next_ms_ = std::max(delay_next_ms_, next);
    // A fire already due when this instance starts (not the one it just wrote) began
    // without it: its part of that fire is over at once, and it waits for the next.
    if (!first && next != 0 && next <= *registry_now) {
      delay_armed_ms_ = next;
      delay_done_ms_ = next;
      joined_late = true;
    }
    delay_ready_ = true;
  }
  if (joined_late) EndDelayPart(next);
  return Status::Ok();
}

void JobRuntime::OnDelayFire(const std::string& name) {
  auto fire = ParseMs(name);
  if (!fire) {
    Log("WARN", fmt::format("job '{}': {}/{}: not a time, ignored", config_.job_name,
                            listener::kDelayNextRoot, name));
    return;
  }
  MutexLock lock(&mu_);
  if (*fire <= delay_next_ms_) return;
  delay_next_ms_ = *fire;
  if (delay_ready_ && started_) ArmNextLocked(clock_.WallNow());
}

void JobRuntime::EndDelayPart(int64_t fire_ms) {
  {
    MutexLock lock(&mu_);
    if (fire_ms <= 0 || fixed_delay_.count() == 0) return;
    delay_done_ms_ = std::max(delay_done_ms_, fire_ms);
  }
  Status s = storage_.FillEphemeralJobNode(
      fmt::format("{}/{}", listener::kDelayEndedRoot, instances_->self().instance_id),
      std::to_string(fire_ms));
  if (!s.ok() && s.code() != StatusCode::kCancelled) {
    Log("WARN", fmt::format("job '{}': fixedDelay: recording the end of fire {}: {}",
                            config_.job_name, fire_ms, s.ToString()));
  }
  DelayEndCheck();
}

int64_t JobRuntime::DelayFireOf(Source source) {
  MutexLock lock(&mu_);
  return source == Source::kCron && fixed_delay_.count() > 0 ? delay_armed_ms_ : 0;
}

void JobRuntime::CheckDelayEnded() {
  {
    MutexLock lock(&mu_);
    if (fixed_delay_.count() == 0 || !delay_ready_ || delay_done_ms_ == 0) return;
  }
  if (!BeginTask()) return;
  PostTask([self = shared_from_this()] {
    self->DelayEndCheck();
    self->EndTask();
  });
}

void JobRuntime::DelayEndCheck() {
  int64_t fire = 0;
  std::chrono::milliseconds delay{0};
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    fire = delay_next_ms_;
    delay = fixed_delay_;
    // Only an instance whose own part of the open fire is over moves the job on.
    if (delay.count() == 0 || fire == 0 || delay_done_ms_ < fire) return;
  }
  const std::string ours = std::to_string(fire);
  const std::string ended_root = std::string(listener::kDelayEndedRoot);
  // From the server: what the cache holds may lag behind an end just written elsewhere.
  auto ids = gated_.GetChildrenKeysDirectly(storage_.path().FullPath("instances"));
  if (!ids.ok()) return;
  for (const auto& id : *ids) {
    auto ended = storage_.GetJobNodeDataDirectly(ended_root + "/" + id);
    if (id == instances_->self().instance_id && (!ended.ok() || *ended != ours)) {
      // This session's record is gone (a new session after an expiry): written again.
      if (!storage_.FillEphemeralJobNode(ended_root + "/" + id, ours).ok()) return;
      continue;
    }
    if (!ended.ok() || *ended != ours) return;  // that instance's part still goes on
  }
  auto config = config_service_->LoadLastGood();
  const int total = config.ok() ? config->sharding_total_count : config_.sharding_total_count;
  for (int item = 0; item < total; ++item) {
    auto running = storage_.GetJobNodeDataDirectly(sharding::RunningNode(item));
    if (running.ok()) return;  // a run (a failover one) still holds the item
  }
  auto waiting =
      gated_.GetChildrenKeysDirectly(storage_.path().FullPath(std::string(failover::kItemsRoot)));
  if (waiting.ok() && !waiting->empty()) return;  // a crashed instance's items to take over
  auto now = storage_.GetRegistryCenterTime();
  if (!now.ok()) return;
  const int64_t next = *now + delay.count();
  // One instance moves the job on: the others' delete of the same node fails.
  Status s = storage_.ExecuteInTransaction(
      {TransactionOp::Delete(NextNode(fire)), TransactionOp::Create(NextNode(next), "")});
  if (s.ok()) {
    Log("INFO", fmt::format("job '{}': fixedDelay: fire {} ended on every instance at "
                            "{}; next fire at {}",
                            config_.job_name, fire, *now, next));
  }
}

}  // namespace elasticjob::bootstrap
