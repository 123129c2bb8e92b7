#include "bootstrap/item_limiter.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace elasticjob::bootstrap {

Result<int> ItemLimitOf(const JobConfiguration& config) {
  const std::string type = config.job_executor_thread_pool_size_provider_type.value_or("CPU");
  if (type == "CPU") {
    return 2 * std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
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

template <typename Make>
bool ItemLimiter::Admit(const Make& make) {
  std::lock_guard<std::mutex> lock(mu_);
  if (active_ >= limit_) {
    queued_.push_back(make());
    return false;
  }
  ++active_;
  return true;
}

void ItemLimiter::Post(std::function<void()> task) {
  if (Admit([&] { return std::move(task); })) pool_.Post(Wrap(std::move(task)));
}

void ItemLimiter::RunHereOrQueue(const std::function<void()>& task,
                                 std::shared_ptr<const void> keep) {
  if (!Admit([&] { return std::function<void()>([task, keep] { task(); }); })) return;
  auto self = shared_from_this();  // the task may end the job's last hold on this
  task();
  self->Release();
}

void ItemLimiter::Release() {
  Update([](int& active, int&) { --active; });
}

void ItemLimiter::SetLimit(int limit) {
  Update([limit](int&, int& current) { current = std::max(1, limit); });
}

void ItemLimiter::Update(const std::function<void(int& active, int& limit)>& change) {
  std::vector<std::function<void()>> next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    change(active_, limit_);
    // A raised limit (or a freed slot) lets queued items go.
    while (!queued_.empty() && active_ < limit_) {
      next.push_back(std::move(queued_.front()));
      queued_.pop_front();
      ++active_;
    }
  }
  for (auto& task : next) pool_.Post(Wrap(std::move(task)));
}

int ItemLimiter::limit() {
  std::lock_guard<std::mutex> lock(mu_);
  return limit_;
}

int ItemLimiter::active() {
  std::lock_guard<std::mutex> lock(mu_);
  return active_;
}

}  // namespace elasticjob::bootstrap
