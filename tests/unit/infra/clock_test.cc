#include "elasticjob/clock.h"

#include <gtest/gtest.h>

#include "elasticjob/simulated_clock.h"

namespace elasticjob {
namespace {

using std::chrono::seconds;

TEST(SimulatedClockTest, AdvanceMovesWallAndMonotonicTogether) {
  SimulatedClock clock(Clock::WallTime{} + seconds(100));
  auto mono = clock.MonotonicNow();
  clock.Advance(seconds(5));
  EXPECT_EQ(clock.WallNow(), Clock::WallTime{} + seconds(105));
  EXPECT_EQ(clock.MonotonicNow() - mono, seconds(5));
}

TEST(SimulatedClockTest, SetWallJumpsOnlyTheWallClock) {
  SimulatedClock clock(Clock::WallTime{} + seconds(100));
  auto mono = clock.MonotonicNow();
  clock.SetWall(Clock::WallTime{} + seconds(10));
  EXPECT_EQ(clock.WallNow(), Clock::WallTime{} + seconds(10));
  EXPECT_EQ(clock.MonotonicNow(), mono);
}

TEST(SimulatedClockTest, ListenersRunOnEveryChangeUntilRemoved) {
  SimulatedClock clock;
  int calls = 0;
  uint64_t id = clock.OnAdvance([&] { ++calls; });
  clock.Advance(seconds(1));
  clock.SetWall(Clock::WallTime{});
  EXPECT_EQ(calls, 2);
  clock.RemoveListener(id);
  clock.Advance(seconds(1));
  EXPECT_EQ(calls, 2);
}

TEST(SystemClockTest, MonotonicNeverGoesBack) {
  Clock& clock = Clock::System();
  auto a = clock.MonotonicNow();
  auto b = clock.MonotonicNow();
  EXPECT_LE(a, b);
  EXPECT_GT(clock.WallNow().time_since_epoch().count(), 0);
}

}  // namespace
}  // namespace elasticjob
