#include "bootstrap/item_limiter.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace elasticjob::bootstrap {

Result<int> ItemLimitOf(const JobConfiguration& config) {
  const std::string type = config.job_executor_thread_pool_size_provider_type.value_or("CPU");
  if (type == "CPU") {
    // Read once: glibc counts the CPUs from sysfs on every call (a file opened and read),
    // and every job of a start-up of thousands asks (twice).
    static const int kCpus = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    return 2 * kCpus;
  }
  if (type == "SINGLE_THREAD") return 1;
  return InvalidArgument(
      fmt::format("jobExecutorThreadPoolSizeProviderType: unknown type '{}' (known: CPU, "
                  "SINGLE_THREAD)",
                  type));
}

std::function<void()> ItemLimiter::Wrap(std::function<void()> task) {
  return [self = shared_from_this(), task = std::move(task)] {
    task();
    self->Release();
  };
}

bool ItemLimiter::TryTake() {
  int active = active_.load();
  while (active < limit_.load()) {
    if (active_.compare_exchange_weak(active, active + 1)) return true;
  }
  return false;
}

template <typename Make>
bool ItemLimiter::Admit(const Make& make) {
  // In order: a task does not pass one that waits.
  if (queued_count_.load() == 0 && TryTake()) return true;
  {
    MutexLock lock(&mu_);
    queued_.push_back(make());
    queued_count_.fetch_add(1);
  }
  Pump();  // a slot freed since TryTake looked
  return false;
}

void ItemLimiter::Post(std::function<void()> task) {
  if (Admit([&] { return std::move(task); })) pool_.Post(Wrap(std::move(task)));
}

void ItemLimiter::RunHereOrQueue(const std::function<void()>& task,
                                 const std::shared_ptr<const void>& keep) {
  if (!Admit([&] { return std::function<void()>([task, keep] { task(); }); })) return;
  task();  // the caller's hold keeps this limiter (the task may end the job's own)
  Release();
}

void ItemLimiter::Release() {
  active_.fetch_sub(1);
  if (queued_count_.load() > 0) Pump();
}

void ItemLimiter::SetLimit(int limit) {
  limit_.store(std::max(1, limit));
  Pump();  // a raised limit lets queued items go; a lower one takes effect as items end
}

void ItemLimiter::Pump() {
  std::vector<std::function<void()>> next;
  {
    MutexLock lock(&mu_);
    while (!queued_.empty() && TryTake()) {
      next.push_back(std::move(queued_.front()));
      queued_.pop_front();
      queued_count_.fetch_sub(1);
    }
  }
  for (auto& task : next) pool_.Post(Wrap(std::move(task)));
}

int ItemLimiter::limit() { return limit_.load(); }

int ItemLimiter::active() { return active_.load(); }

}  // namespace elasticjob::bootstrap
