// ForwardingRegistry: a registry that forwards every call of the internal protocol
// (reg/coordinator_registry.h) to another one, for tests that override only what they watch
// or change (leveldb's EnvWrapper).
//
// Thread safety: as the registry it forwards to.
#ifndef ELASTICJOB_TESTS_UNIT_BOOTSTRAP_FORWARDING_REGISTRY_H_
#define ELASTICJOB_TESTS_UNIT_BOOTSTRAP_FORWARDING_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "reg/coordinator_registry.h"

namespace elasticjob::test_support {

class ForwardingRegistry : public reg::ForeignRegistry {
 public:
  // REQUIRES: `inner` outlives this object.
  explicit ForwardingRegistry(RegistryCenter& inner)
      : ForeignRegistry(inner), ref_(inner), inner_(*ref_) {}

  // The public methods are ForeignRegistry's; the protocol goes to `inner`'s too.
  void ExecuteInTransactionAsync(std::vector<TransactionOp> ops, Executor& executor,
                                 std::function<void(Status)> done) override {
    inner_.ExecuteInTransactionAsync(std::move(ops), executor, std::move(done));
  }
  void ExecuteInTransactionStampedAsync(std::vector<TransactionOp> ops, Executor& executor,
                                        std::function<void(Result<int64_t>)> done) override {
    inner_.ExecuteInTransactionStampedAsync(std::move(ops), executor, std::move(done));
  }
  bool LeaseHeld() override { return inner_.LeaseHeld(); }
  std::chrono::steady_clock::time_point lease_expiry() override { return inner_.lease_expiry(); }
  bool AwaitLease(std::chrono::steady_clock::time_point deadline) override {
    return inner_.AwaitLease(deadline);
  }
  uint64_t session_epoch() override { return inner_.session_epoch(); }
  std::chrono::milliseconds session_timeout() override { return inner_.session_timeout(); }
  Result<std::unique_ptr<reg::CountedSubscription>> WatchTree(
      std::string_view key, Executor& executor, std::function<void(const TreeEvent&)> callback,
      reg::WatchPolicy policy) override {
    return inner_.WatchTree(key, executor, std::move(callback), std::move(policy));
  }
  reg::CachedRead GetCached(std::string_view key) override { return inner_.GetCached(key); }
  const std::shared_ptr<reg::RegistryStats>& stats() const override { return inner_.stats(); }

 protected:
  reg::CoordinatorRegistry& inner() { return inner_; }

 private:
  const reg::CoordinatorRef ref_;
  reg::CoordinatorRegistry& inner_;
};

}  // namespace elasticjob::test_support

#endif  // ELASTICJOB_TESTS_UNIT_BOOTSTRAP_FORWARDING_REGISTRY_H_
