// mapreduce_sum: sums 1..N through N sub-tasks of a MapReduceJob, mapped in two levels (the
// root maps batches, each batch maps its numbers). Several copies against one ZooKeeper
// share the sub-tasks; the copy that leads the job coordinates and reduces, and prints
//   RESULT <sum> subtasks=<N> ms=<elapsed>
//
//   mapreduce_sum --registry zookeeper://127.0.0.1:2181/demo --subtasks 100000 [--cron EXPR]
//
// Without --cron the job is one-off: the copy given --execute-when-workers K runs it once
// K task workers are registered. Test knobs: --flaky-every K (every K-th number throws on
// its first attempt), --always-fail I (number I always throws), --oversize (the root maps
// one payload over the limit), --slow-us U (each number takes U microseconds),
// --print-numbers (a line `DID <i>` per number run). --task-store URL: the shared task store
// (postgresql://...), from which a new leader resumes a run its predecessor left.
#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "elasticjob/api/task_job.h"
#include "task_example_main.h"

namespace {

class SumJob final : public elasticjob::MapReduceJob {
 public:
  long n = 0;
  long batch = 1000;
  long flaky_every = 0;
  long always_fail = 0;
  bool oversize = false;
  long slow_us = 0;
  bool print_numbers = false;

  elasticjob::TaskResult Process(elasticjob::TaskContext& ctx) override {
    if (ctx.IsRootTask()) {
      start_ = std::chrono::steady_clock::now();
      std::vector<elasticjob::Subtask> batches;
      for (long lo = 1; lo <= n; lo += batch) {
        batches.push_back({std::to_string(lo) + "-" + std::to_string(std::min(n, lo + batch - 1))});
      }
      if (oversize) batches.push_back({std::string((1 << 20) + 1, 'x')});
      if (auto s = ctx.Map(std::move(batches), "BATCH"); !s.ok()) return {false, s.ToString()};
      return {true, ""};
    }
    if (ctx.task_name() == "BATCH") {
      const std::string& p = ctx.payload();
      long lo = std::stol(p.substr(0, p.find('-')));
      long hi = std::stol(p.substr(p.find('-') + 1));
      std::vector<elasticjob::Subtask> leaves;
      leaves.reserve(static_cast<size_t>(hi - lo + 1));
      for (long i = lo; i <= hi; ++i) leaves.push_back({std::to_string(i)});
      if (auto s = ctx.Map(std::move(leaves), "NUMBER"); !s.ok()) return {false, s.ToString()};
      return {true, ""};
    }
    long i = std::stol(ctx.payload());
    if (slow_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(slow_us));
    if (i == always_fail) throw std::runtime_error("number " + std::to_string(i) + " always fails");
    if (flaky_every > 0 && i % flaky_every == 0 && ctx.attempt() == 1) {
      throw std::runtime_error("number " + std::to_string(i) + " fails its first attempt");
    }
    // One write per line: sub-tasks run on several threads at once.
    if (print_numbers) std::cout << ("DID " + std::to_string(i) + "\n") << std::flush;
    long done = ++processed_;
    if (done % 1000 == 0) std::cout << "progress " << done << std::endl;
    return {true, ctx.payload()};
  }

  void Reduce(elasticjob::TaskContext&, const elasticjob::SubtaskResults& results) override {
    long long sum = 0;
    long numbers = 0;
    long failed = 0;
    std::string first_failure;
    auto s = results.ForEach([&](const elasticjob::SubtaskResult& r) {
      if (r.name != "NUMBER") return;
      if (!r.success) {
        if (failed++ == 0) first_failure = r.data;
        return;
      }
      sum += std::stoll(r.data);
      ++numbers;
    });
    if (!s.ok()) throw std::runtime_error(s.ToString());
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - start_)
                  .count();
    if (failed > 0) std::cout << "FAILED " << failed << " first=" << first_failure << std::endl;
    std::cout << "RESULT " << sum << " subtasks=" << numbers << " ms=" << ms << std::endl;
  }

 private:
  // Set again by the root; a resumed run (no root here) counts from the process's start.
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::atomic<long> processed_{0};
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mapreduce_sum: sums 1..N through N sub-tasks"};
  example::Flags f;
  f.job = "mapreduce_sum";
  auto job = std::make_shared<SumJob>();
  app.add_option("--registry", f.registry, "registry URL")->required();
  app.add_option("--subtasks", job->n, "N")->required()->check(CLI::Range(1L, 100000000L));
  app.add_option("--cron", f.cron, "cron expression (default: one-off)");
  app.add_option("--job", f.job, "job name");
  app.add_option("--batch", job->batch, "numbers per first-level sub-task")
      ->check(CLI::Range(1L, 1000000L));
  app.add_option("--execute-when-workers", f.execute_when_workers,
                 "one-off: run once this many task workers are registered");
  app.add_option("--flaky-every", job->flaky_every, "every K-th number fails its first attempt");
  app.add_option("--always-fail", job->always_fail, "this number always fails");
  app.add_flag("--oversize", job->oversize, "the root maps a payload over the limit");
  app.add_option("--slow-us", job->slow_us, "microseconds of work per number");
  app.add_flag("--print-numbers", job->print_numbers, "a line 'DID <i>' per number run");
  app.add_option("--task-store", f.task_store, "the shared task store (postgresql://...)");
  std::vector<std::string> props;
  app.add_option("--prop", props, "a job prop, key=value (task.max.attempts, ...)");
  CLI11_PARSE(app, argc, argv);
  for (const std::string& p : props) {
    auto eq = p.find('=');
    if (eq == std::string::npos) {
      std::cerr << "--prop: '" << p << "' is not key=value\n";
      return 2;
    }
    f.props[p.substr(0, eq)] = p.substr(eq + 1);
  }
  return example::RunTaskJob(f, job);
}
