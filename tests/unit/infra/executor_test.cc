#include "elasticjob/executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "elasticjob/simulated_clock.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;

TEST(ThreadPoolTest, RunsEveryTaskAndDrainsOnStop) {
  std::atomic<int> n{0};
  {
    ThreadPool pool(3);
    for (int i = 0; i < 1000; ++i) pool.Post([&] { ++n; });
    pool.Stop();
    pool.Join();
    pool.Post([&] { n += 1000; });  // dropped after Stop
  }
  EXPECT_EQ(n.load(), 1000);
}

TEST(SerialExecutorTest, RunsTasksOneAtATimeInOrder) {
  ThreadPool pool(4);
  std::vector<int> order;
  std::atomic<int> running{0};
  std::atomic<bool> overlapped{false};
  std::promise<void> done;
  {
    SerialExecutor serial(pool);
    for (int i = 0; i < 500; ++i) {
      serial.Post([&, i] {
        if (++running > 1) overlapped = true;
        order.push_back(i);  // unsynchronised on purpose: serial execution makes it safe
        --running;
        if (i == 499) done.set_value();
      });
    }
    done.get_future().wait();
  }
  EXPECT_FALSE(overlapped.load());
  ASSERT_EQ(order.size(), 500u);
  for (int i = 0; i < 500; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);
}

TEST(SerialExecutorTest, ManyStrandsShareOnePool) {
  ThreadPool pool(2);
  std::atomic<int> n{0};
  {
    std::vector<std::unique_ptr<SerialExecutor>> strands;
    for (int i = 0; i < 100; ++i) strands.push_back(std::make_unique<SerialExecutor>(pool));
    for (auto& s : strands)
      for (int k = 0; k < 10; ++k) s->Post([&] { ++n; });
  }  // destructors wait for their tasks
  EXPECT_EQ(n.load(), 1000);
}

TEST(ThreadPoolTest, StartsWorkersOnlyAsConcurrentWorkNeedsThemUpToItsBound) {
  // Before the pool, so that they outlive its workers: a worker released at the end may
  // still be waking in `blocking` when the test's body returns (ASan saw it read `release`
  // after its scope).
  std::mutex mu;
  std::condition_variable cv;
  int started = 0;
  bool release = false;
  ThreadPool pool(3);
  EXPECT_EQ(pool.threads(), 0u);
  auto blocking = [&] {
    std::unique_lock<std::mutex> l(mu);
    ++started;
    cv.notify_all();
    cv.wait(l, [&] { return release; });
  };
  auto wait_started = [&](int n) {
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(l, std::chrono::seconds(20), [&] { return started >= n; });
  };
  for (int i = 1; i <= 3; ++i) {
    pool.Post(blocking);  // every worker is busy: each task gets a new one
    ASSERT_TRUE(wait_started(i));
    EXPECT_EQ(pool.threads(), static_cast<size_t>(i));
  }
  std::promise<void> fourth;
  pool.Post([&] { fourth.set_value(); });  // at the bound: it waits for a worker
  EXPECT_EQ(pool.threads(), 3u);
  {
    std::lock_guard<std::mutex> l(mu);
    release = true;
  }
  cv.notify_all();
  fourth.get_future().wait();
  // Sequential work afterwards reuses the idle workers.
  for (int i = 0; i < 10; ++i) {
    std::promise<void> done;
    pool.Post([&] { done.set_value(); });
    done.get_future().wait();
  }
  EXPECT_EQ(pool.threads(), 3u);
}

// KeepAwake has idle workers stand by (lingering or woken) before it starts new ones, up to
// the bound; they take tasks posted meanwhile as any worker does.
TEST(ThreadPoolTest, KeepAwakeUsesIdleWorkersFirstThenStartsMoreUpToTheBound) {
  ThreadPool pool(3);
  {
    std::promise<void> ran;
    pool.Post([&] { ran.set_value(); });
    ran.get_future().wait();
  }
  ASSERT_EQ(pool.threads(), 1u);
  const auto soon = std::chrono::steady_clock::now() + 5ms;
  pool.KeepAwake(1, soon);  // the idle worker will do
  EXPECT_EQ(pool.threads(), 1u);
  pool.KeepAwake(2, soon);  // one more
  EXPECT_EQ(pool.threads(), 2u);
  pool.KeepAwake(10, soon);  // never beyond the bound
  EXPECT_EQ(pool.threads(), 3u);
  for (int i = 0; i < 10; ++i) {
    std::promise<void> done;
    pool.PostUrgent([&] { done.set_value(); });
    ASSERT_EQ(done.get_future().wait_for(20s), std::future_status::ready);
  }
  EXPECT_EQ(pool.threads(), 3u);
}

// A burst's extra workers leave once idle for the keep-alive, and steady work afterwards
// keeps using the worker that went idle last (the others age out), never fewer than one.
// The keep-alive is on a simulated clock: it passes when the test advances the clock, and the
// workers it retires have left when Advance() returns.
TEST(ThreadPoolTest, WorkersIdleForTheKeepAliveLeaveButTheLastStays) {
  SimulatedClock clock;
  ThreadPool pool(3, /*keep_alive=*/200ms, clock);
  std::mutex mu;
  std::condition_variable cv;
  int started = 0;
  bool release = false;
  for (int i = 0; i < 3; ++i) {
    pool.Post([&] {
      std::unique_lock<std::mutex> l(mu);
      ++started;
      cv.notify_all();
      cv.wait(l, [&] { return release; });
    });
  }
  {
    std::unique_lock<std::mutex> l(mu);
    ASSERT_TRUE(cv.wait_for(l, 20s, [&] { return started == 3; }));
    release = true;
  }
  cv.notify_all();
  EXPECT_EQ(pool.threads(), 3u);
  // Waits (on the real clock, bounded) until `n` workers wait for a task: a worker that has
  // run a task is on its way there, and its keep-alive starts when it arrives.
  auto idle = [&](size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (pool.idle_threads() != n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    return pool.idle_threads() == n;
  };
  auto run_one = [&] {
    std::promise<void> done;
    pool.Post([&] { done.set_value(); });
    return done.get_future().wait_for(20s) == std::future_status::ready;
  };
  ASSERT_TRUE(idle(3));
  // One task at a time, more often than the keep-alive: the worker that went idle last serves
  // them all, and the two others retire once idle for the keep-alive.
  ASSERT_TRUE(run_one());
  ASSERT_TRUE(idle(3));
  clock.Advance(150ms);
  EXPECT_EQ(pool.threads(), 3u);  // nobody idle for 200 ms yet
  ASSERT_TRUE(run_one());
  ASSERT_TRUE(idle(3));
  clock.Advance(50ms);  // the two others idle for 200 ms, the one serving for 50
  EXPECT_EQ(pool.threads(), 1u);
  EXPECT_EQ(pool.idle_threads(), 1u);
  ASSERT_TRUE(run_one());  // the post joins the retired threads
  EXPECT_EQ(pool.threads(), 1u);
  // The last one stays, however long it is idle, and still runs what comes.
  ASSERT_TRUE(idle(1));
  clock.Advance(1h);
  EXPECT_EQ(pool.threads(), 1u);
  EXPECT_EQ(pool.idle_threads(), 1u);
  ASSERT_TRUE(run_one());
  EXPECT_EQ(pool.threads(), 1u);
}

TEST(SerialExecutorTest, TasksMayPostMoreTasks) {
  ThreadPool pool(1);
  std::promise<int> result;
  SerialExecutor serial(pool);
  serial.Post([&] { serial.Post([&] { result.set_value(42); }); });
  EXPECT_EQ(result.get_future().get(), 42);
}

TEST(ThreadPoolTest, UrgentTasksRunBeforeQueuedOnesAndInTheirOwnOrder) {
  ThreadPool pool(1);
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::vector<std::string> order;  // guarded by mu
  pool.Post([&] {                  // holds the only worker while the others queue
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return release; });
  });
  auto record = [&](std::string name) {
    return [&, name] {
      std::lock_guard<std::mutex> l(mu);
      order.push_back(name);
      cv.notify_all();
    };
  };
  pool.Post(record("normal-1"));
  pool.PostUrgent(record("urgent-1"));
  pool.Post(record("normal-2"));
  pool.PostUrgentAll({record("urgent-2"), record("urgent-3")});
  {
    std::lock_guard<std::mutex> l(mu);
    release = true;
    cv.notify_all();
  }
  std::unique_lock<std::mutex> l(mu);
  ASSERT_TRUE(cv.wait_for(l, 20s, [&] { return order.size() == 5; }));
  EXPECT_EQ(order,
            (std::vector<std::string>{"urgent-1", "urgent-2", "urgent-3", "normal-1", "normal-2"}));
}

}  // namespace
}  // namespace elasticjob
