#include "reg/coordinator_registry.h"

#include <utility>

#include "reg/registry_base.h"

namespace elasticjob::reg {

namespace {

// A subscription that counts nothing, over the foreign registry's own.
class UncountedSubscription final : public CountedSubscription {
 public:
  explicit UncountedSubscription(std::unique_ptr<Subscription> inner) : inner_(std::move(inner)) {}

 private:
  std::unique_ptr<Subscription> inner_;
};

}  // namespace

Result<std::unique_ptr<Subscription>> CoordinatorRegistry::Watch(
    std::string_view key, Executor& executor, std::function<void(const TreeEvent&)> callback) {
  auto watch = WatchTree(key, executor, std::move(callback), nullptr);
  if (!watch.ok()) return watch.status();
  return std::unique_ptr<Subscription>(std::move(watch).value());
}

const std::shared_ptr<RegistryStats>& CoordinatorRegistry::stats() const {
  static const std::shared_ptr<RegistryStats> kNone;
  return kNone;
}

Result<std::unique_ptr<CountedSubscription>> ForeignRegistry::WatchTree(
    std::string_view key, Executor& executor, std::function<void(const TreeEvent&)> callback,
    WatchPolicy policy) {
  (void)policy;
  auto watch = registry_.Watch(key, executor, std::move(callback));
  if (!watch.ok()) return watch.status();
  return std::unique_ptr<CountedSubscription>(
      std::make_unique<UncountedSubscription>(std::move(watch).value()));
}

void ForeignRegistry::ExecuteInTransactionAsync(std::vector<TransactionOp> ops, Executor& executor,
                                                std::function<void(Status)> done) {
  // The registry, not this adapter, which may be gone by then (CoordinatorRef).
  executor.Post([registry = &registry_, ops = std::move(ops), done = std::move(done)] {
    done(registry->ExecuteInTransaction(ops));
  });
}

void ForeignRegistry::ExecuteInTransactionStampedAsync(std::vector<TransactionOp> ops,
                                                       Executor& executor,
                                                       std::function<void(Result<int64_t>)> done) {
  if (Status s = ValidateStampable(ops); !s.ok()) {
    executor.Post([s, done = std::move(done)] { done(s); });
    return;
  }
  executor.Post([registry = &registry_, ops = std::move(ops), done = std::move(done)] {
    Status s = registry->ExecuteInTransaction(ops);
    done(s.ok() ? Result<int64_t>(int64_t{0}) : Result<int64_t>(std::move(s)));
  });
}

CoordinatorRef::CoordinatorRef(RegistryCenter& registry)
    : registry_(dynamic_cast<CoordinatorRegistry*>(&registry)) {
  if (registry_ == nullptr) {
    adapter_ = std::make_unique<ForeignRegistry>(registry);
    registry_ = adapter_.get();
  }
}

}  // namespace elasticjob::reg
