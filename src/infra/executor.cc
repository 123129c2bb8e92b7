#include "elasticjob/executor.h"

#include <cassert>

namespace elasticjob {

ThreadPool::ThreadPool(int threads) {
  assert(threads >= 1);
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { Run(); });
}

ThreadPool::~ThreadPool() {
  Stop();
  Join();
}

void ThreadPool::Post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void ThreadPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
  }
  cv_.notify_all();
}

void ThreadPool::Join() {
  for (auto& t : workers_) {
    if (t.joinable() && t.get_id() != std::this_thread::get_id()) t.join();
  }
}

void ThreadPool::Run() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopped_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopped and drained
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

SerialExecutor::~SerialExecutor() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return !scheduled_; });
}

void SerialExecutor::Post(std::function<void()> task) {
  bool schedule = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
    if (!scheduled_) {
      scheduled_ = true;
      schedule = true;
    }
  }
  if (schedule) target_.Post([this] { Drain(); });
}

void SerialExecutor::Drain() {
  while (true) {
    std::function<void()> task;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (tasks_.empty()) {
        scheduled_ = false;
        idle_cv_.notify_all();
        return;
      }
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace elasticjob
