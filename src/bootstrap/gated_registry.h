// GatedRegistry: the registry's internal protocol (reg/coordinator_registry.h) as one job's
// runtime sees it, behind the job's Gate (bootstrap/user_code.h). Every call goes through to the
// registry while the gate is open; once Join has closed it, calls return CANCELLED ("job shut
// down") without touching the registry, so a run Join abandoned can end on its own after the user
// destroyed the registry. Subscriptions are the registry's own (the runtime ends them before the
// gate closes).
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_BOOTSTRAP_GATED_REGISTRY_H_
#define ELASTICJOB_BOOTSTRAP_GATED_REGISTRY_H_

#include <memory>

#include "bootstrap/user_code.h"
#include "reg/coordinator_registry.h"

namespace elasticjob::bootstrap {

class GatedRegistry final : public reg::CoordinatorRegistry {
 public:
  // REQUIRES: `inner` outlives every call that enters `gate`.
  GatedRegistry(reg::CoordinatorRegistry& inner, std::shared_ptr<Gate> gate)
      : inner_(inner), gate_(std::move(gate)) {}

  Status Init() override;
  void Close() override;
  Result<std::string> Get(std::string_view key) override;
  Result<std::string> GetDirectly(std::string_view key) override;
  reg::CachedRead GetCached(std::string_view key) override;
  Result<bool> IsExisted(std::string_view key) override;
  Result<std::vector<std::string>> GetChildrenKeys(std::string_view key) override;
  Result<int> GetNumChildren(std::string_view key) override;
  Result<std::vector<std::string>> GetChildrenKeysDirectly(std::string_view key) override;
  Status Persist(std::string_view key, std::string_view value) override;
  Status Update(std::string_view key, std::string_view value) override;
  Status PersistEphemeral(std::string_view key, std::string_view value) override;
  Result<std::string> PersistSequential(std::string_view key, std::string_view value) override;
  Result<std::string> PersistEphemeralSequential(std::string_view key,
                                                 std::string_view value) override;
  Status CreateContainer(std::string_view key) override;
  Status CreateContainerBelow(std::string_view key, std::string_view present) override;
  Status Remove(std::string_view key) override;
  Status ExecuteInTransaction(const std::vector<TransactionOp>& ops) override;
  void ExecuteInTransactionAsync(std::vector<TransactionOp> ops, Executor& executor,
                                 std::function<void(Status)> done) override;
  Result<int64_t> GetRegistryCenterTime(std::string_view key) override;
  Result<std::unique_ptr<reg::CountedSubscription>> WatchTree(
      std::string_view key, Executor& executor, std::function<void(const TreeEvent&)> callback,
      reg::WatchPolicy policy) override;
  std::unique_ptr<Subscription> AddConnectionStateListener(
      Executor& executor, std::function<void(ConnectionState)> callback) override;
  Status ExecuteInLeader(std::string_view key, const std::function<void()>& callback) override;
  // The registry's (0 once the gate is closed).
  void ExecuteInTransactionStampedAsync(std::vector<TransactionOp> ops, Executor& executor,
                                        std::function<void(Result<int64_t>)> done) override;
  uint64_t session_epoch() override;
  // The lease is the inner registry's, ungated: a closed gate stops runs another way.
  bool LeaseHeld() override { return inner_.LeaseHeld(); }
  std::chrono::steady_clock::time_point lease_expiry() override { return inner_.lease_expiry(); }
  bool AwaitLease(std::chrono::steady_clock::time_point deadline) override {
    return inner_.AwaitLease(deadline);
  }
  std::chrono::milliseconds session_timeout() override;
  const std::shared_ptr<reg::RegistryStats>& stats() const override { return inner_.stats(); }

 private:
  template <typename Fn>
  auto Call(Fn fn) -> decltype(fn());

  reg::CoordinatorRegistry& inner_;
  const std::shared_ptr<Gate> gate_;
};

}  // namespace elasticjob::bootstrap

#endif  // ELASTICJOB_BOOTSTRAP_GATED_REGISTRY_H_
