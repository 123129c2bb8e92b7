#include "trigger/launch_board.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "elasticjob/simulated_clock.h"
#include "unit/trigger/spy_executor.h"

namespace elasticjob::trigger {
namespace {

using std::chrono::seconds;

// What the units did, in order, and a way to wait for it.
class Log {
 public:
  void Add(std::string what) {
    std::lock_guard<std::mutex> l(mu_);
    entries_.push_back(std::move(what));
    cv_.notify_all();
  }
  bool WaitFor(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, seconds(10), [&] { return entries_.size() >= n; });
  }
  std::vector<std::string> entries() {
    std::lock_guard<std::mutex> l(mu_);
    return entries_;
  }
  bool Has(const std::string& what) {
    std::lock_guard<std::mutex> l(mu_);
    return std::find(entries_.begin(), entries_.end(), what) != entries_.end();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> entries_;
};

// Holds tasks until the test runs them.
class ManualExecutor final : public Executor {
 public:
  void Post(std::function<void()> task) override {
    std::lock_guard<std::mutex> l(mu_);
    tasks_.push_back(std::move(task));
    cv_.notify_all();
  }
  bool WaitFor(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, seconds(10), [&] { return tasks_.size() >= n; });
  }
  size_t RunAll() {
    std::vector<std::function<void()>> tasks;
    {
      std::lock_guard<std::mutex> l(mu_);
      tasks.swap(tasks_);
    }
    for (auto& t : tasks) t();
    return tasks.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::function<void()>> tasks_;
};

class LaunchBoardTest : public ::testing::Test {
 protected:
  Clock::WallTime At(int s) { return Clock::WallTime{} + seconds(s); }
  LaunchBoard::Unit Unit(const std::string& name, bool go = true) {
    return LaunchBoard::Unit{[this, name, go](std::function<void()>& after, Clock::WallTime) {
                               log.Add("begin " + name);
                               after = [this, name] { log.Add("after " + name); };
                               return go;
                             },
                             [this, name] { log.Add("run " + name); }, nullptr};
  }

  SimulatedClock clock{At(100)};
  ManualExecutor control;
  Log log;
  ThreadPool workers{4};
  ThreadPool timer_pool{1};
  TimerScheduler timer{clock, timer_pool};  // first to go: nothing is handed over after
};

TEST_F(LaunchBoardTest, UnitsStartAtTheirTimeAndRunOnlyWhenBegunSaysSo) {
  LaunchBoard board(timer, workers, /*drains=*/1, /*most=*/1, control);
  std::vector<LaunchBoard::Unit> first;
  first.push_back(Unit("a"));
  first.push_back(Unit("b", /*go=*/false));
  board.Add(At(101), std::move(first));
  std::vector<LaunchBoard::Unit> second;
  second.push_back(Unit("c"));
  board.Add(At(101), std::move(second));  // the same batch

  clock.Advance(std::chrono::milliseconds(999));
  // Two tasks for the batch (its launch and its watch, both armed ahead), not one per unit.
  EXPECT_EQ(timer.pending(), 2u);
  EXPECT_TRUE(log.entries().empty());
  clock.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(log.WaitFor(5));
  // One drainer: in the order added; "b" was begun, not run.
  EXPECT_EQ(log.entries(),
            (std::vector<std::string>{"begin a", "run a", "begin b", "begin c", "run c"}));
}

// Admission decides against the time its drainer read as it took the unit's run (a run
// picked up late is seen late): the board's clock at the start, not the due time.
TEST_F(LaunchBoardTest, EachBeginIsGivenTheBoardsTimeAtItsStart) {
  LaunchBoard board(timer, workers, /*drains=*/1, /*most=*/1, control);
  std::mutex mu;
  std::vector<Clock::WallTime> seen;
  std::vector<LaunchBoard::Unit> units;
  for (int i = 0; i < 3; ++i) {
    units.push_back(LaunchBoard::Unit{[&](std::function<void()>&, Clock::WallTime now) {
                                        std::lock_guard<std::mutex> l(mu);
                                        seen.push_back(now);
                                        return true;
                                      },
                                      [this] { log.Add("run"); }, nullptr});
  }
  board.Add(At(101), std::move(units));
  clock.Advance(seconds(3));  // picked up two seconds after the due time
  ASSERT_TRUE(log.WaitFor(3));
  std::lock_guard<std::mutex> l(mu);
  EXPECT_EQ(seen, (std::vector<Clock::WallTime>(3, At(103))));
}

TEST_F(LaunchBoardTest, AfterWorkGoesToControlOnceEveryUnitHasBegun) {
  LaunchBoard board(timer, workers, /*drains=*/2, /*most=*/2, control);
  std::vector<LaunchBoard::Unit> units;
  for (int i = 0; i < 70; ++i) units.push_back(Unit(std::to_string(i)));
  board.Add(At(101), std::move(units));
  clock.Advance(seconds(1));
  ASSERT_TRUE(log.WaitFor(140));  // every begin and run
  // Two tasks (64 afters and 6), posted once the last unit had begun, besides the drainers'
  // releases of their units.
  ASSERT_TRUE(control.WaitFor(2));
  EXPECT_FALSE(log.Has("after 0"));
  for (int i = 0; i < 100 && log.entries().size() < 210 && control.WaitFor(1); ++i) {
    control.RunAll();
  }
  EXPECT_EQ(log.entries().size(), 210u);
  EXPECT_TRUE(log.Has("after 0"));
  EXPECT_TRUE(log.Has("after 69"));
}

TEST_F(LaunchBoardTest, UnitsAddedAfterTheirBatchWasHandedOverStartAtOnce) {
  LaunchBoard board(timer, workers, /*drains=*/1, /*most=*/1, control);
  std::vector<LaunchBoard::Unit> first;
  first.push_back(Unit("a"));
  board.Add(At(101), std::move(first));
  clock.Advance(seconds(1));
  ASSERT_TRUE(log.WaitFor(2));
  std::vector<LaunchBoard::Unit> late;
  late.push_back(Unit("late"));
  board.Add(At(101), std::move(late));  // its time has come already
  ASSERT_TRUE(log.WaitFor(4));
  EXPECT_TRUE(log.Has("run late"));
  // The next fire time's batch (the board forgets the batches handed over before it).
  std::vector<LaunchBoard::Unit> next;
  next.push_back(Unit("next"));
  board.Add(At(102), std::move(next));
  clock.Advance(seconds(1));
  ASSERT_TRUE(log.WaitFor(6));
  EXPECT_TRUE(log.Has("run next"));
}

// User code may be slow: the rest of the batch must not wait behind it while the pool has
// threads to spare. Here the first unit to run waits until the second has run: with one
// drainer and no growth it would wait for good. The batch's watch, kEndHold after the due
// time, finds every drainer in user code and has another worker join.
TEST_F(LaunchBoardTest, SlowUserCodeHasAnotherWorkerTakeTheRestOfTheBatch) {
  LaunchBoard board(timer, workers, /*drains=*/1, /*most=*/4, control);
  std::mutex mu;
  std::condition_variable cv;
  bool second_ran = false;
  bool first_gave_up = false;
  std::vector<LaunchBoard::Unit> units;
  units.push_back(LaunchBoard::Unit{[](std::function<void()>&, Clock::WallTime) { return true; },
                                    [&] {
                                      log.Add("first started");
                                      std::unique_lock<std::mutex> l(mu);
                                      if (!cv.wait_for(l, seconds(10), [&] { return second_ran; }))
                                        first_gave_up = true;
                                      log.Add("first");
                                    },
                                    nullptr});
  units.push_back(LaunchBoard::Unit{[](std::function<void()>&, Clock::WallTime) { return true; },
                                    [&] {
                                      std::lock_guard<std::mutex> l(mu);
                                      second_ran = true;
                                      cv.notify_all();
                                    },
                                    nullptr});
  board.Add(At(101), std::move(units));
  clock.Advance(seconds(1));
  ASSERT_TRUE(log.WaitFor(1));  // the drainer is in the first unit's code
  clock.Advance(LaunchBoard::kEndHold);
  ASSERT_TRUE(control.WaitFor(1));  // the watch
  control.RunAll();
  ASSERT_TRUE(log.WaitFor(2));
  std::lock_guard<std::mutex> l(mu);
  EXPECT_TRUE(second_ran);
  EXPECT_FALSE(first_gave_up);
}

// A fast batch costs no worker but the drainers it starts with: nothing has another join
// while units are started quickly, however many there are.
TEST_F(LaunchBoardTest, AFastBatchIsStartedByItsDrainersAlone) {
  ThreadPool pool{8};
  LaunchBoard board(timer, pool, /*drains=*/1, /*most=*/8, control);
  std::vector<LaunchBoard::Unit> units;
  for (int i = 0; i < 500; ++i) units.push_back(Unit(std::to_string(i)));
  board.Add(At(101), std::move(units));
  clock.Advance(seconds(1));
  ASSERT_TRUE(log.WaitFor(1000));  // every begin and run
  EXPECT_EQ(pool.threads(), 1u);
}

// An item's end bookkeeping (AfterStarts) waits until its drainer has started every unit it
// could take: no start waits behind another item's end.
TEST_F(LaunchBoardTest, AfterStartsCallsRunOnceTheDrainerHasNoUnitLeft) {
  LaunchBoard board(timer, workers, /*drains=*/1, /*most=*/1, control);
  struct Ends {
    Log* log;
  } ends{&log};
  std::vector<LaunchBoard::Unit> units;
  for (int i = 0; i < 20; ++i) {
    units.push_back(LaunchBoard::Unit{[](std::function<void()>&, Clock::WallTime) { return true; },
                                      [this, &ends, i] {
                                        log.Add("run " + std::to_string(i));
                                        LaunchBoard::AfterStarts(
                                            [](void* object, size_t index) {
                                              static_cast<Ends*>(object)->log->Add(
                                                  "end " + std::to_string(index));
                                            },
                                            &ends, static_cast<size_t>(i));
                                      },
                                      nullptr});
  }
  board.Add(At(101), std::move(units));
  clock.Advance(seconds(1));
  ASSERT_TRUE(log.WaitFor(40));
  std::vector<std::string> entries = log.entries();
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(entries[i], "run " + std::to_string(i));
    EXPECT_EQ(entries[20 + i], "end " + std::to_string(i));  // in the order their items ran
  }
  // Off a drainer: at once.
  LaunchBoard::AfterStarts(
      [](void* object, size_t) { static_cast<Ends*>(object)->log->Add("end now"); }, &ends, 0);
  EXPECT_TRUE(log.Has("end now"));
}

// ... but a drainer kept in slow user code does not hold the ends of the items it ran before:
// the batch's watch runs them once the drainer's run has gone on for a whole look.
TEST_F(LaunchBoardTest, AfterStartsKeptBehindASlowUnitRunAtTheWatch) {
  LaunchBoard board(timer, workers, /*drains=*/1, /*most=*/1, control);
  struct Ends {
    Log* log;
  } ends{&log};
  // The slow unit's wait, shared with it: it may wake after the test body has returned.
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool release = false;
  };
  auto gate = std::make_shared<Gate>();
  std::vector<LaunchBoard::Unit> units;
  units.push_back(LaunchBoard::Unit{[](std::function<void()>&, Clock::WallTime) { return true; },
                                    [&ends] {
                                      LaunchBoard::AfterStarts(
                                          [](void* object, size_t) {
                                            static_cast<Ends*>(object)->log->Add("end fast");
                                          },
                                          &ends, 0);
                                    },
                                    nullptr});
  units.push_back(LaunchBoard::Unit{[](std::function<void()>&, Clock::WallTime) { return true; },
                                    [this, gate] {
                                      log.Add("slow started");
                                      std::unique_lock<std::mutex> l(gate->mu);
                                      gate->cv.wait_for(l, seconds(10),
                                                        [&] { return gate->release; });
                                      log.Add("slow done");
                                    },
                                    nullptr});
  board.Add(At(101), std::move(units));
  clock.Advance(seconds(1));
  ASSERT_TRUE(log.WaitFor(1));
  // The first look sees the drainer's run begin since the batch began: kept.
  clock.Advance(LaunchBoard::kEndHold);
  ASSERT_TRUE(control.WaitFor(1));
  control.RunAll();
  EXPECT_FALSE(log.Has("end fast"));
  // The second sees the same run going on: the ends run now, on the control executor.
  clock.Advance(LaunchBoard::kEndHold);
  ASSERT_TRUE(control.WaitFor(1));
  control.RunAll();
  EXPECT_TRUE(log.Has("end fast"));
  {
    std::lock_guard<std::mutex> l(gate->mu);
    gate->release = true;
  }
  gate->cv.notify_all();
  EXPECT_TRUE(log.WaitFor(3));  // "slow done": nothing of this test is used after it
}

// ... but only up to `most` drainers, the workers' bound: the third unit waits until one of
// the two running ones is done.
TEST_F(LaunchBoardTest, NoMoreThanMostDrainersRunUserCodeAtOnce) {
  LaunchBoard board(timer, workers, /*drains=*/1, /*most=*/2, control);
  std::mutex mu;
  std::condition_variable cv;
  int running = 0;
  int most_running = 0;
  bool release = false;
  auto slow = [&] {
    std::unique_lock<std::mutex> l(mu);
    most_running = std::max(most_running, ++running);
    cv.notify_all();
    cv.wait_for(l, seconds(10), [&] { return release; });
    --running;
    log.Add("done");
  };
  std::vector<LaunchBoard::Unit> units;
  for (int i = 0; i < 3; ++i) {
    units.push_back(LaunchBoard::Unit{[](std::function<void()>&, Clock::WallTime) { return true; },
                                      slow, nullptr});
  }
  board.Add(At(101), std::move(units));
  clock.Advance(seconds(1));
  {
    std::unique_lock<std::mutex> l(mu);
    ASSERT_TRUE(cv.wait_for(l, seconds(10), [&] { return running == 1; }));
  }
  // Two looks of the batch's watch: the first has one more drainer join, the second none.
  for (int look = 0; look < 2; ++look) {
    clock.Advance(LaunchBoard::kEndHold);
    ASSERT_TRUE(control.WaitFor(1));
    control.RunAll();
  }
  {
    std::unique_lock<std::mutex> l(mu);
    ASSERT_TRUE(cv.wait_for(l, seconds(10), [&] { return running == 2; }));
    release = true;
    cv.notify_all();
  }
  ASSERT_TRUE(log.WaitFor(3));
  std::lock_guard<std::mutex> l(mu);
  EXPECT_EQ(most_running, 2);
}

// An item's end (PostAfterRun) waits until every unit of the batch has been taken, so that the
// control executor's work does not take a core from the starts still to come; the ends then
// go in one task, in the order their items ran.
TEST_F(LaunchBoardTest, EndsPostedWhileUnitsAreLeftGoOnceTheLastUnitIsTakenInOneTask) {
  ManualExecutor ends;
  LaunchBoard board(timer, workers, /*drains=*/1, /*most=*/1, control);
  std::vector<size_t> ends_seen_by_run;  // the ends posted when each unit ran
  std::vector<LaunchBoard::Unit> units;
  for (std::string name : {"a", "b", "c"}) {
    units.push_back(LaunchBoard::Unit{[](std::function<void()>&, Clock::WallTime) { return true; },
                                      [&, name] {
                                        ends_seen_by_run.push_back(ends.RunAll());
                                        LaunchBoard::PostAfterRun(
                                            ends, [&, name] { log.Add("end " + name); });
                                      },
                                      nullptr});
  }
  board.Add(At(101), std::move(units));
  clock.Advance(seconds(1));
  ASSERT_TRUE(ends.WaitFor(1));
  EXPECT_EQ(ends_seen_by_run, (std::vector<size_t>{0, 0, 0}));  // none went during the starts
  EXPECT_EQ(ends.RunAll(), 1u);                                 // one task for the three
  EXPECT_EQ(log.entries(), (std::vector<std::string>{"end a", "end b", "end c"}));
  // Off a drainer: posted at once.
  LaunchBoard::PostAfterRun(ends, [&] { log.Add("end d"); });
  EXPECT_EQ(ends.RunAll(), 1u);
  EXPECT_TRUE(log.Has("end d"));
}

// ... or kEndHold after the first was kept: a slow job must not hold back the ends of the items
// that ran before it.
TEST_F(LaunchBoardTest, EndsKeptGoAfterTheHoldWhenASlowUnitKeepsTheRestWaiting) {
  ManualExecutor ends;
  LaunchBoard board(timer, workers, /*drains=*/1, /*most=*/1, control);
  std::mutex mu;
  std::condition_variable cv;
  bool slow_started = false;
  std::vector<LaunchBoard::Unit> units;
  units.push_back(LaunchBoard::Unit{
      [](std::function<void()>&, Clock::WallTime) { return true; },
      [&] { LaunchBoard::PostAfterRun(ends, [&] { log.Add("end fast"); }); }, nullptr});
  units.push_back(LaunchBoard::Unit{[](std::function<void()>&, Clock::WallTime) { return true; },
                                    [&] {
                                      {
                                        std::lock_guard<std::mutex> l(mu);
                                        slow_started = true;
                                        cv.notify_all();
                                      }
                                      // Slow: it waits for the fast item's end.
                                      if (ends.WaitFor(1) && ends.RunAll() == 1) {
                                        log.Add("slow saw the end");
                                      }
                                    },
                                    nullptr});
  units.push_back(LaunchBoard::Unit{[](std::function<void()>&, Clock::WallTime) { return true; },
                                    [] {}, nullptr});
  board.Add(At(101), std::move(units));
  clock.Advance(seconds(1));
  {
    std::unique_lock<std::mutex> l(mu);
    ASSERT_TRUE(cv.wait_for(l, seconds(10), [&] { return slow_started; }));
  }
  EXPECT_EQ(ends.RunAll(), 0u);  // kept: a unit is left
  // The hold's flush comes through the timer to the control executor.
  clock.Advance(LaunchBoard::kEndHold);
  ASSERT_TRUE(control.WaitFor(1));
  control.RunAll();
  ASSERT_TRUE(log.WaitFor(2));
  EXPECT_EQ(log.entries(), (std::vector<std::string>{"end fast", "slow saw the end"}));
}

// With the real clock: a batch of one unit has one worker standing by at its time; one that
// grows past kStandbyAll units, added a job at a time, has every drainer standing by.
TEST_F(LaunchBoardTest, ABatchThatGrowsLargeHasEveryDrainerStandingByAtItsTime) {
  ThreadPool pool(3);
  SpyExecutor spy(pool);
  ThreadPool control_pool(1);
  // Woken 150 ms early (200 µs in production), the batches due 1 s ahead: the adds are in
  // long before the timer reads the standby, even on a loaded machine.
  ThreadPool real_timer_pool(1);
  TimerScheduler real_timer(Clock::System(), real_timer_pool, 0, std::chrono::milliseconds(150));
  LaunchBoard board(real_timer, spy, /*drains=*/2, /*most=*/2, control_pool);
  const auto run = [&](const std::string& name) {
    return LaunchBoard::Unit{[](std::function<void()>&, Clock::WallTime) { return true; },
                             [this, name] { log.Add(name); }, nullptr};
  };
  std::vector<LaunchBoard::Unit> one;
  one.push_back(run("alone"));
  board.Add(Clock::System().WallNow() + seconds(1), std::move(one));
  ASSERT_TRUE(log.WaitFor(1));
  const Clock::WallTime due = Clock::System().WallNow() + seconds(1);
  const size_t units = LaunchBoard::kStandbyAll + 4;
  for (size_t i = 0; i < units; ++i) {
    std::vector<LaunchBoard::Unit> job;
    job.push_back(run("job " + std::to_string(i)));
    board.Add(due, std::move(job));
  }
  ASSERT_TRUE(log.WaitFor(1 + units));
  {
    std::lock_guard<std::mutex> l(spy.mu);
    ASSERT_GE(spy.handed_over.size(), 2u);
    EXPECT_EQ(spy.handed_over[0].first, 1);      // the one-unit batch: one standing by
    EXPECT_EQ(spy.handed_over[1].first, 1 + 2);  // the large one: both drainers
    EXPECT_GE(spy.handed_over[1].second, due);
  }
  // A drainer may still be handing its batch's ends to the control pool: it is done before
  // the pools go (as in the runtime, whose item pool is joined before its control pool).
  pool.Stop();
  pool.Join();
}

TEST_F(LaunchBoardTest, AUnitLeftInASlowDrainersSliceIsTakenByAnother) {
  // Two drainers, a slice each: the first unit of the launcher's slice blocks in user code,
  // and the rest of that slice is started by the other drainer meanwhile.
  LaunchBoard board(timer, workers, /*drains=*/2, /*most=*/2, control);
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::vector<LaunchBoard::Unit> units;
  for (int i = 0; i < 10; ++i) {
    const std::string name = std::to_string(i);
    units.push_back(LaunchBoard::Unit{[](std::function<void()>&, Clock::WallTime) { return true; },
                                      [&, name] {
                                        log.Add("run " + name);
                                        if (name != "0") return;
                                        {
                                          std::unique_lock<std::mutex> l(mu);
                                          cv.wait(l, [&] { return release; });
                                        }
                                        log.Add("end 0");
                                      },
                                      nullptr});
  }
  board.Add(At(101), std::move(units));
  clock.Advance(seconds(1));
  ASSERT_TRUE(log.WaitFor(10));  // every unit ran while "0" still blocks
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(log.Has("run " + std::to_string(i))) << i;
  {
    std::lock_guard<std::mutex> l(mu);
    release = true;
  }
  cv.notify_all();
  ASSERT_TRUE(log.WaitFor(11));  // its wait is over before the test's state goes
}

TEST_F(LaunchBoardTest, AWarmBoardHandsALargeBatchOverAheadAndBeginsNoUnitBeforeItsTime) {
  // Destroyed in reverse: the timer first (nothing is handed over after), then the drainers'
  // pool (its Join waits for their last posts to control_pool), then control_pool.
  ThreadPool control_pool(1);
  ThreadPool drainers(4);
  SpyExecutor spy(drainers);
  ThreadPool real_timer_pool(1);
  // Woken 150 ms before the hand-off (200 µs in production) to stand the drainers by: a
  // timer that wakes past the hand-off time hands it over with nobody standing by, which a
  // loaded machine (the sanitizer stages) did with the default.
  TimerScheduler real_timer(Clock::System(), real_timer_pool, 0, std::chrono::milliseconds(150));
  // Wide enough that a loaded machine still hands it over ahead.
  const auto warm = std::chrono::milliseconds(300);
  LaunchBoard board(real_timer, spy, /*drains=*/2, /*most=*/2, control_pool, warm);
  std::mutex mu;
  std::vector<Clock::WallTime> begun;
  const size_t n = LaunchBoard::kStandbyAll * 4;
  const Clock::WallTime due = Clock::System().WallNow() + seconds(1);
  for (size_t i = 0; i < n; ++i) {  // one job at a time, as the runtime adds them
    std::vector<LaunchBoard::Unit> job;
    job.push_back(LaunchBoard::Unit{[&](std::function<void()>&, Clock::WallTime) {
                                      std::lock_guard<std::mutex> l(mu);
                                      begun.push_back(Clock::System().WallNow());
                                      return true;
                                    },
                                    [this, i] { log.Add("run " + std::to_string(i)); }, nullptr});
    board.Add(due, std::move(job));
  }
  ASSERT_TRUE(log.WaitFor(n));
  {
    std::lock_guard<std::mutex> l(mu);
    ASSERT_EQ(begun.size(), n);
    for (const Clock::WallTime at : begun) EXPECT_GE(at, due);
  }
  std::lock_guard<std::mutex> l(spy.mu);
  // Handed over ahead (the timer's hand-off, then the launcher's helper), with both
  // drainers standing by for it.
  ASSERT_GE(spy.handed_over.size(), 2u);
  EXPECT_LT(spy.handed_over[0].second, due);
  EXPECT_GE(spy.handed_over[0].second, due - warm);
  EXPECT_EQ(spy.handed_over[0].first, 2);
}

TEST_F(LaunchBoardTest, ASmallBatchOnAWarmBoardIsHandedOverAtItsTime) {
  // Destroyed in reverse: the timer first (nothing is handed over after), then the drainers'
  // pool (its Join waits for their last posts to control_pool), then control_pool.
  ThreadPool control_pool(1);
  ThreadPool drainers(4);
  SpyExecutor spy(drainers);
  ThreadPool real_timer_pool(1);
  TimerScheduler real_timer(Clock::System(), real_timer_pool);
  LaunchBoard board(real_timer, spy, /*drains=*/2, /*most=*/2, control_pool,
                    std::chrono::milliseconds(100));
  const Clock::WallTime due = Clock::System().WallNow() + std::chrono::milliseconds(300);
  std::vector<LaunchBoard::Unit> one;
  one.push_back(LaunchBoard::Unit{[](std::function<void()>&, Clock::WallTime) { return true; },
                                  [this] { log.Add("alone"); }, nullptr});
  board.Add(due, std::move(one));
  ASSERT_TRUE(log.WaitFor(1));
  std::lock_guard<std::mutex> l(spy.mu);
  ASSERT_GE(spy.handed_over.size(), 1u);
  EXPECT_GE(spy.handed_over[0].second, due);
}

}  // namespace
}  // namespace elasticjob::trigger
