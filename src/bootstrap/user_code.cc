#include "bootstrap/user_code.h"

#include <fmt/format.h>

#include "infra/log.h"

namespace elasticjob::bootstrap {

bool Gate::Enter() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return false;
  ++inside_;
  return true;
}

void Gate::Exit() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--inside_ == 0) idle_cv_.notify_all();
}

void Gate::Close() {
  std::unique_lock<std::mutex> lock(mu_);
  closed_ = true;
  closed_flag_.store(true, std::memory_order_release);
  idle_cv_.wait(lock, [&] { return inside_ == 0; });
}

bool Gate::closed() { return closed_flag_.load(std::memory_order_acquire); }

void LogUserException(const std::string& job, const std::string& what) {
  std::string error = "unknown exception";
  try {
    throw;
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
  }
  infra::LogLine("WARN", fmt::format("job '{}': {} threw: {} (ignored)", job, what, error));
}

namespace {

class GatedListener final : public ElasticJobListener {
 public:
  GatedListener(std::shared_ptr<ElasticJobListener> inner, std::shared_ptr<Gate> gate)
      : inner_(std::move(inner)), gate_(std::move(gate)), order_(inner_->order()) {}
  // Exceptions go on to JobListeners, which logs them as a listener's.
  void BeforeJobExecuted(const ShardingContexts& contexts) override {
    if (Gate::Pass pass(*gate_); pass) inner_->BeforeJobExecuted(contexts);
  }
  void AfterJobExecuted(const ShardingContexts& contexts) override {
    if (Gate::Pass pass(*gate_); pass) inner_->AfterJobExecuted(contexts);
  }
  int order() const override { return order_; }

 private:
  const std::shared_ptr<ElasticJobListener> inner_;
  const std::shared_ptr<Gate> gate_;
  const int order_;
};

}  // namespace

std::vector<JobListener> GateListeners(std::vector<JobListener> listeners,
                                       std::shared_ptr<Gate> gate) {
  for (auto& l : listeners) {
    if (auto* each = std::get_if<std::shared_ptr<ElasticJobListener>>(&l);
        each != nullptr && *each != nullptr) {
      l = JobListener(std::make_shared<GatedListener>(*each, gate));
    }
  }
  return listeners;
}

}  // namespace elasticjob::bootstrap
