// The fence between one job's runtime and the code it calls but does not own: the user's
// callbacks (on_item_run, on_trigger, listeners, listener factories, sharding strategies) and
// the registry. Two parts:
//   Gate     open while the job is scheduled; Join closes it, waiting for calls already
//            inside, and from then on every gated call is refused: a run Join abandoned
//            calls nothing of the user's and touches no registry (which the user may destroy
//            once Join returns).
//   Fenced   calls a user callback through the gate and turns an exception into a logged
//            line naming the job and the callback: never std::terminate.
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_BOOTSTRAP_USER_CODE_H_
#define ELASTICJOB_BOOTSTRAP_USER_CODE_H_

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "elasticjob/api/job_listener.h"
#include "elasticjob/logger.h"
#include "elasticjob/mutex.h"
#include "elasticjob/sharding/job_sharding_strategy.h"
#include "elasticjob/thread_annotations.h"

namespace elasticjob::bootstrap {

class Gate {
 public:
  // `logger`: where a user callback's exception is logged (null: the process default).
  explicit Gate(std::shared_ptr<Logger> logger = nullptr) : logger_(std::move(logger)) {}
  Logger* logger() const { return logger_.get(); }

  // Enters the gate: false once it is closed (then nothing is to be called).
  bool Enter();
  void Exit();
  // Refuses every Enter from now on and waits until the calls inside have left.
  void Close();
  bool closed() { return closed_flag_.load(std::memory_order_acquire); }
  // What closed() reads, for a launch board unit's prefetch (LaunchBoard::Unit::touch).
  const void* closed_address() const { return &closed_flag_; }

  // Enter ... Exit for one scope.
  class Pass {
   public:
    explicit Pass(Gate& gate) : gate_(gate), entered_(gate.Enter()) {}
    ~Pass() {
      if (entered_) gate_.Exit();
    }
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;
    explicit operator bool() const { return entered_; }

   private:
    Gate& gate_;
    const bool entered_;
  };

 private:
  const std::shared_ptr<Logger> logger_;
  static constexpr uint32_t kClosed = 1u << 31;
  // kClosed | the number of calls inside. Enter and Exit are one atomic each; mu_ and
  // idle_cv_ serve only Close's wait for the last one out.
  std::atomic<uint32_t> state_{0};
  Mutex mu_;
  CondVar idle_cv_{&mu_};
  // Whether Close has begun, for closed() at every item start.
  std::atomic<bool> closed_flag_{false};
};

// Logs to `logger` (null: the default) that `what` of job `job` threw the current exception
// (call inside a catch block).
void LogUserException(Logger* logger, const std::string& job, const std::string& what);

// Calls `fn(args...)` through `gate` (nothing once it is closed), catching and logging an
// exception as `what` of job `job`.
template <typename Fn, typename... Args>
void Fenced(Gate& gate, const std::string& job, const char* what, const Fn& fn, Args&&... args) {
  Gate::Pass pass(gate);
  if (!pass) return;
  try {
    fn(std::forward<Args>(args)...);
  } catch (...) {
    LogUserException(gate.logger(), job, what);
  }
}

// `listeners` with each ElasticJobListener behind `gate` (a distribute-once listener's hooks
// run inside the registry's latch, which the gated registry refuses once closed).
std::vector<JobListener> GateListeners(std::vector<JobListener> listeners,
                                       std::shared_ptr<Gate> gate);

// A shared strategy, for a JobShardingStrategyRegistry that owns what it holds.
class SharedStrategy final : public JobShardingStrategy {
 public:
  explicit SharedStrategy(std::shared_ptr<const JobShardingStrategy> inner, std::string type)
      : inner_(std::move(inner)), type_(std::move(type)) {}
  std::string type() const override { return type_; }
  std::vector<ShardingAssignment> Sharding(const std::vector<std::string>& instances,
                                           std::string_view job_name,
                                           int sharding_total_count) const override {
    return inner_->Sharding(instances, job_name, sharding_total_count);
  }

 private:
  const std::shared_ptr<const JobShardingStrategy> inner_;
  const std::string type_;
};

}  // namespace elasticjob::bootstrap

#endif  // ELASTICJOB_BOOTSTRAP_USER_CODE_H_
