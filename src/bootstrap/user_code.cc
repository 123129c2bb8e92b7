#include "bootstrap/user_code.h"

#include <fmt/format.h>

#include "infra/log.h"

namespace elasticjob::bootstrap {

bool Gate::Enter() {
  // One atomic add on the way in (no lock: every item's report passes here).
  if ((state_.fetch_add(1, std::memory_order_acq_rel) & kClosed) == 0) return true;
  Exit();  // closed: out again at once
  return false;
}

void Gate::Exit() {
  if (state_.fetch_sub(1, std::memory_order_acq_rel) - 1 == kClosed) {
    // The last one out of a closed gate: Close checks the count under mu_, so taking it
    // here means Close either sees the count at zero or is waiting for this notify.
    MutexLock lock(&mu_);
    idle_cv_.SignalAll();
  }
}

void Gate::Close() {
  state_.fetch_or(kClosed, std::memory_order_acq_rel);
  closed_flag_.store(true, std::memory_order_release);
  MutexLock lock(&mu_);
  while (state_.load(std::memory_order_acquire) != kClosed) idle_cv_.Wait();
}

void LogUserException(Logger* logger, const std::string& job, const std::string& what) {
  std::string error = "unknown exception";
  try {
    throw;
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
  }
  infra::LogLine(logger, "WARN", {.job = job, .item = std::nullopt, .instance = {}},
                 fmt::format("job '{}': {} threw: {} (ignored)", job, what, error));
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
