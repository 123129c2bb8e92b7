#include "reg/bounded_removal.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>

#include "elasticjob/mutex.h"
#include "infra/thread_name.h"

namespace elasticjob::reg {

namespace {

// Where the answers run: never destroyed, so it outlives every registry (one that answers
// after its caller gave up, at its Close for instance). A thread, not the answering one:
// ZooKeeper retries a transaction whose connection was lost on this executor, synchronously.
Executor& Answers() {
  static auto* pool = [] {
    auto* p = new ThreadPool(1);
    p->set_thread_name("ej-removal");
    return p;
  }();
  return *pool;
}

struct Pending {
  explicit Pending(std::vector<std::string> keys) : waiting(std::move(keys)) {}
  Mutex mu;
  CondVar cv{&mu};
  std::vector<std::string> waiting ELASTICJOB_GUARDED_BY(mu);  // keys not answered yet
  Status first_error ELASTICJOB_GUARDED_BY(mu);
};

}  // namespace

Status RemoveWithin(CoordinatorRegistry& registry, const std::vector<std::string>& keys,
                    std::chrono::steady_clock::time_point deadline) {
  auto pending = std::make_shared<Pending>(keys);
  for (const std::string& key : keys) {
    registry.ExecuteInTransactionAsync(
        {TransactionOp::Delete(key)}, Answers(), [pending, key](Status s) {
          MutexLock lock(&pending->mu);
          std::erase(pending->waiting, key);
          if (!s.ok() && s.code() != StatusCode::kNotFound && pending->first_error.ok()) {
            pending->first_error = std::move(s);
          }
          pending->cv.SignalAll();
        });
  }
  MutexLock lock(&pending->mu);
  while (!pending->waiting.empty() && pending->cv.WaitUntil(deadline)) {
  }
  if (!pending->waiting.empty()) {
    return Status(StatusCode::kTimeout,
                  fmt::format("the registry did not answer the removal of {} in time",
                              fmt::join(pending->waiting, ", ")));
  }
  return pending->first_error;
}

}  // namespace elasticjob::reg
