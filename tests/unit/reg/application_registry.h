// ApplicationRegistry: a RegistryCenter written the way an application would write its own
// (tests of the internal protocol's adapter, reg::ForeignRegistry).
#ifndef ELASTICJOB_TESTS_UNIT_REG_APPLICATION_REGISTRY_H_
#define ELASTICJOB_TESTS_UNIT_REG_APPLICATION_REGISTRY_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/reg/registry_center.h"

namespace elasticjob::reg {

// A registry an application wrote itself, as ElasticJob users may implement
// CoordinatorRegistryCenter: it keeps its nodes in a memory:// registry and reaches it through
// the public API only (the pointer is a RegistryCenter, never the library's class).
class ApplicationRegistry final : public RegistryCenter {
 public:
  explicit ApplicationRegistry(const std::string& name_space)
      : store_(std::move(NewRegistryCenter("memory://" + name_space)).value()) {}

  Status Init() override { return store_->Init(); }
  void Close() override { store_->Close(); }
  Result<std::string> Get(std::string_view key) override { return store_->Get(key); }
  Result<std::string> GetDirectly(std::string_view key) override {
    return store_->GetDirectly(key);
  }
  Result<bool> IsExisted(std::string_view key) override { return store_->IsExisted(key); }
  Result<std::vector<std::string>> GetChildrenKeys(std::string_view key) override {
    return store_->GetChildrenKeys(key);
  }
  Result<int> GetNumChildren(std::string_view key) override { return store_->GetNumChildren(key); }
  Result<std::vector<std::string>> GetChildrenKeysDirectly(std::string_view key) override {
    return store_->GetChildrenKeysDirectly(key);
  }
  Status Persist(std::string_view key, std::string_view value) override {
    return store_->Persist(key, value);
  }
  Status Update(std::string_view key, std::string_view value) override {
    return store_->Update(key, value);
  }
  Status PersistEphemeral(std::string_view key, std::string_view value) override {
    return store_->PersistEphemeral(key, value);
  }
  Result<std::string> PersistSequential(std::string_view key, std::string_view value) override {
    return store_->PersistSequential(key, value);
  }
  Result<std::string> PersistEphemeralSequential(std::string_view key,
                                                 std::string_view value) override {
    return store_->PersistEphemeralSequential(key, value);
  }
  Status CreateContainer(std::string_view key) override { return store_->CreateContainer(key); }
  Status Remove(std::string_view key) override { return store_->Remove(key); }
  Status ExecuteInTransaction(const std::vector<TransactionOp>& ops) override {
    ++transactions;
    return store_->ExecuteInTransaction(ops);
  }
  Result<int64_t> GetRegistryCenterTime(std::string_view key) override {
    return store_->GetRegistryCenterTime(key);
  }
  Result<std::unique_ptr<Subscription>> Watch(
      std::string_view key, Executor& executor,
      std::function<void(const TreeEvent&)> callback) override {
    return store_->Watch(key, executor, std::move(callback));
  }
  std::unique_ptr<Subscription> AddConnectionStateListener(
      Executor& executor, std::function<void(ConnectionState)> callback) override {
    return store_->AddConnectionStateListener(executor, std::move(callback));
  }
  Status ExecuteInLeader(std::string_view key, const std::function<void()>& callback) override {
    return store_->ExecuteInLeader(key, callback);
  }

  std::atomic<int> transactions{0};

 private:
  std::unique_ptr<RegistryCenter> store_;
};

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_TESTS_UNIT_REG_APPLICATION_REGISTRY_H_
