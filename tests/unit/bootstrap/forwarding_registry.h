// ForwardingRegistry: a RegistryCenter that forwards every call to another one, for tests
// that override only what they watch or change (leveldb's EnvWrapper).
//
// Thread safety: as the registry it forwards to.
#ifndef ELASTICJOB_TESTS_UNIT_BOOTSTRAP_FORWARDING_REGISTRY_H_
#define ELASTICJOB_TESTS_UNIT_BOOTSTRAP_FORWARDING_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "elasticjob/reg/registry_center.h"

namespace elasticjob::test_support {

class ForwardingRegistry : public RegistryCenter {
 public:
  // REQUIRES: `inner` outlives this object.
  explicit ForwardingRegistry(RegistryCenter& inner) : inner_(inner) {}

  Status Init() override { return inner_.Init(); }
  void Close() override { inner_.Close(); }
  Result<std::string> Get(std::string_view key) override { return inner_.Get(key); }
  Result<std::string> GetDirectly(std::string_view key) override { return inner_.GetDirectly(key); }
  Result<bool> IsExisted(std::string_view key) override { return inner_.IsExisted(key); }
  Result<std::vector<std::string>> GetChildrenKeys(std::string_view key) override {
    return inner_.GetChildrenKeys(key);
  }
  Result<int> GetNumChildren(std::string_view key) override { return inner_.GetNumChildren(key); }
  Result<std::vector<std::string>> GetChildrenKeysDirectly(std::string_view key) override {
    return inner_.GetChildrenKeysDirectly(key);
  }
  Status Persist(std::string_view key, std::string_view value) override {
    return inner_.Persist(key, value);
  }
  Status Update(std::string_view key, std::string_view value) override {
    return inner_.Update(key, value);
  }
  Status PersistEphemeral(std::string_view key, std::string_view value) override {
    return inner_.PersistEphemeral(key, value);
  }
  Result<std::string> PersistSequential(std::string_view key, std::string_view value) override {
    return inner_.PersistSequential(key, value);
  }
  Result<std::string> PersistEphemeralSequential(std::string_view key,
                                                 std::string_view value) override {
    return inner_.PersistEphemeralSequential(key, value);
  }
  Status CreateContainer(std::string_view key) override { return inner_.CreateContainer(key); }
  Status Remove(std::string_view key) override { return inner_.Remove(key); }
  Status ExecuteInTransaction(const std::vector<TransactionOp>& ops) override {
    return inner_.ExecuteInTransaction(ops);
  }
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
  Result<int64_t> GetRegistryCenterTime(std::string_view key) override {
    return inner_.GetRegistryCenterTime(key);
  }
  uint64_t session_epoch() override { return inner_.session_epoch(); }
  std::chrono::milliseconds session_timeout() override { return inner_.session_timeout(); }
  using RegistryCenter::Watch;
  Result<std::unique_ptr<Subscription>> Watch(std::string_view key, Executor& executor,
                                              std::function<void(const TreeEvent&)> callback,
                                              WatchPolicy policy) override {
    return inner_.Watch(key, executor, std::move(callback), std::move(policy));
  }
  std::unique_ptr<Subscription> AddConnectionStateListener(
      Executor& executor, std::function<void(ConnectionState)> callback) override {
    return inner_.AddConnectionStateListener(executor, std::move(callback));
  }
  Status ExecuteInLeader(std::string_view key, const std::function<void()>& callback) override {
    return inner_.ExecuteInLeader(key, callback);
  }

 protected:
  RegistryCenter& inner() { return inner_; }

 private:
  RegistryCenter& inner_;
};

}  // namespace elasticjob::test_support

#endif  // ELASTICJOB_TESTS_UNIT_BOOTSTRAP_FORWARDING_REGISTRY_H_
