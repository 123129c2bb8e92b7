// A Logger that keeps every line it is given and lets a test wait for one.
#ifndef ELASTICJOB_TESTS_UNIT_INFRA_CAPTURING_LOGGER_H_
#define ELASTICJOB_TESTS_UNIT_INFRA_CAPTURING_LOGGER_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "elasticjob/logger.h"

namespace elasticjob::test_support {

class CapturingLogger final : public Logger {
 public:
  struct Line {
    LogLevel level;
    std::string job;
    std::optional<int> item;
    std::string instance;
    std::string message;
  };

  void Log(LogLevel level, const LogFields& fields, std::string_view message) override {
    std::lock_guard<std::mutex> l(mu_);
    lines_.push_back({level, std::string(fields.job), fields.item, std::string(fields.instance),
                      std::string(message)});
    cv_.notify_all();
  }

  // Waits (bounded) for a line that `match` accepts and returns it.
  std::optional<Line> WaitFor(const std::function<bool(const Line&)>& match,
                              std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    std::unique_lock<std::mutex> l(mu_);
    std::optional<Line> found;
    cv_.wait_for(l, timeout, [&] {
      for (const Line& line : lines_) {
        if (match(line)) {
          found = line;
          return true;
        }
      }
      return false;
    });
    return found;
  }

  std::vector<Line> lines() {
    std::lock_guard<std::mutex> l(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Line> lines_;
};

}  // namespace elasticjob::test_support

#endif  // ELASTICJOB_TESTS_UNIT_INFRA_CAPTURING_LOGGER_H_
