#include "bootstrap/gated_registry.h"

namespace elasticjob::bootstrap {

namespace {

Status ShutDown() { return Status(StatusCode::kCancelled, "job shut down"); }

}  // namespace

template <typename Fn>
auto GatedRegistry::Call(Fn fn) -> decltype(fn()) {
  Gate::Pass pass(*gate_);
  if (!pass) return ShutDown();
  return fn();
}

uint64_t GatedRegistry::session_epoch() {
  Gate::Pass pass(*gate_);
  return pass ? inner_.session_epoch() : 0;
}
std::chrono::milliseconds GatedRegistry::session_timeout() {
  Gate::Pass pass(*gate_);
  return pass ? inner_.session_timeout() : std::chrono::milliseconds(0);
}

Status GatedRegistry::Init() {
  return Call([&] { return inner_.Init(); });
}
void GatedRegistry::Close() {}  // the user's registry: never closed by a job
Result<std::string> GatedRegistry::Get(std::string_view key) {
  return Call([&] { return inner_.Get(key); });
}
Result<std::string> GatedRegistry::GetDirectly(std::string_view key) {
  return Call([&] { return inner_.GetDirectly(key); });
}
Result<bool> GatedRegistry::IsExisted(std::string_view key) {
  return Call([&] { return inner_.IsExisted(key); });
}
Result<std::vector<std::string>> GatedRegistry::GetChildrenKeys(std::string_view key) {
  return Call([&] { return inner_.GetChildrenKeys(key); });
}
Result<int> GatedRegistry::GetNumChildren(std::string_view key) {
  return Call([&] { return inner_.GetNumChildren(key); });
}
Result<std::vector<std::string>> GatedRegistry::GetChildrenKeysDirectly(std::string_view key) {
  return Call([&] { return inner_.GetChildrenKeysDirectly(key); });
}
Status GatedRegistry::Persist(std::string_view key, std::string_view value) {
  return Call([&] { return inner_.Persist(key, value); });
}
Status GatedRegistry::Update(std::string_view key, std::string_view value) {
  return Call([&] { return inner_.Update(key, value); });
}
Status GatedRegistry::PersistEphemeral(std::string_view key, std::string_view value) {
  return Call([&] { return inner_.PersistEphemeral(key, value); });
}
Result<std::string> GatedRegistry::PersistSequential(std::string_view key, std::string_view value) {
  return Call([&] { return inner_.PersistSequential(key, value); });
}
Result<std::string> GatedRegistry::PersistEphemeralSequential(std::string_view key,
                                                              std::string_view value) {
  return Call([&] { return inner_.PersistEphemeralSequential(key, value); });
}
Status GatedRegistry::CreateContainer(std::string_view key) {
  return Call([&] { return inner_.CreateContainer(key); });
}
Status GatedRegistry::CreateContainerBelow(std::string_view key, std::string_view present) {
  return Call([&] { return inner_.CreateContainerBelow(key, present); });
}
Status GatedRegistry::Remove(std::string_view key) {
  return Call([&] { return inner_.Remove(key); });
}
Status GatedRegistry::ExecuteInTransaction(const std::vector<TransactionOp>& ops) {
  return Call([&] { return inner_.ExecuteInTransaction(ops); });
}
void GatedRegistry::ExecuteInTransactionAsync(std::vector<TransactionOp> ops, Executor& executor,
                                              std::function<void(Status)> done) {
  Gate::Pass pass(*gate_);
  if (!pass) {
    executor.Post([done = std::move(done)] { done(ShutDown()); });
    return;
  }
  // The outcome goes through the gate too: after Join, it is CANCELLED for the runtime.
  inner_.ExecuteInTransactionAsync(std::move(ops), executor,
                                   [gate = gate_, done = std::move(done)](Status s) {
                                     done(gate->closed() && s.ok() ? ShutDown() : std::move(s));
                                   });
}
void GatedRegistry::ExecuteInTransactionStampedAsync(std::vector<TransactionOp> ops,
                                                     Executor& executor,
                                                     std::function<void(Result<int64_t>)> done) {
  Gate::Pass pass(*gate_);
  if (!pass) {
    executor.Post([done = std::move(done)] { done(ShutDown()); });
    return;
  }
  inner_.ExecuteInTransactionStampedAsync(
      std::move(ops), executor, [gate = gate_, done = std::move(done)](Result<int64_t> r) {
        done(gate->closed() && r.ok() ? Result<int64_t>(ShutDown()) : std::move(r));
      });
}
reg::CachedRead GatedRegistry::GetCached(std::string_view key) {
  Gate::Pass pass(*gate_);
  return pass ? inner_.GetCached(key) : reg::CachedRead{};
}
Result<int64_t> GatedRegistry::GetRegistryCenterTime(std::string_view key) {
  return Call([&] { return inner_.GetRegistryCenterTime(key); });
}
Result<std::unique_ptr<reg::CountedSubscription>> GatedRegistry::WatchTree(
    std::string_view key, Executor& executor, std::function<void(const TreeEvent&)> callback,
    reg::WatchPolicy policy) {
  return Call([&]() -> Result<std::unique_ptr<reg::CountedSubscription>> {
    return inner_.WatchTree(key, executor, std::move(callback), std::move(policy));
  });
}
std::unique_ptr<Subscription> GatedRegistry::AddConnectionStateListener(
    Executor& executor, std::function<void(ConnectionState)> callback) {
  Gate::Pass pass(*gate_);
  if (!pass) return nullptr;
  return inner_.AddConnectionStateListener(executor, std::move(callback));
}
Status GatedRegistry::ExecuteInLeader(std::string_view key, const std::function<void()>& callback) {
  return Call([&] { return inner_.ExecuteInLeader(key, callback); });
}

}  // namespace elasticjob::bootstrap
