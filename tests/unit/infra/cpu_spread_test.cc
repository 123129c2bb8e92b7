#include "infra/cpu_spread.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

namespace elasticjob::infra {
namespace {

// Runs `fn` on a new thread allowed `allowed` CPUs, started on CPU 0 (pinned to it first).
template <typename Fn>
void OnThread(const cpu_set_t& allowed, Fn fn) {
  std::thread t([&] {
    cpu_set_t zero;
    CPU_ZERO(&zero);
    CPU_SET(0, &zero);
    ASSERT_EQ(sched_setaffinity(0, sizeof(zero), &zero), 0);
    ASSERT_EQ(sched_getcpu(), 0);
    // Widened: the thread stays where it runs until something moves it.
    ASSERT_EQ(sched_setaffinity(0, sizeof(allowed), &allowed), 0);
    fn();
  });
  t.join();
}

class CpuSpreadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cpu_set_t mine;
    ASSERT_EQ(sched_getaffinity(0, sizeof(mine), &mine), 0);
    if (!CPU_ISSET(0, &mine) || !CPU_ISSET(1, &mine)) GTEST_SKIP() << "needs CPUs 0 and 1";
    CPU_ZERO(&two_);
    CPU_SET(0, &two_);
    CPU_SET(1, &two_);
  }
  cpu_set_t two_;
};

TEST_F(CpuSpreadTest, AThreadJoiningOnATakenCpuMovesToAFreeOneForItsStayAndBackAfter) {
  CpuSpread spread;
  OnThread(two_, [&] { spread.Take(); });  // the burst's first thread, on CPU 0
  EXPECT_EQ(spread.taken(), 1u);
  OnThread(two_, [&] {
    {
      CpuSpread::Stay stay = spread.Join();
      EXPECT_TRUE(stay.moved());
      EXPECT_EQ(sched_getcpu(), 1);
      cpu_set_t now;
      ASSERT_EQ(sched_getaffinity(0, sizeof(now), &now), 0);
      EXPECT_FALSE(CPU_ISSET(0, &now));
    }
    cpu_set_t after;
    ASSERT_EQ(sched_getaffinity(0, sizeof(after), &after), 0);
    EXPECT_TRUE(CPU_EQUAL(&after, &two_));  // allowed both again
  });
  EXPECT_EQ(spread.taken(), 3u);
}

TEST_F(CpuSpreadTest, AThreadWithNoFreeCpuToGoToStaysWhereItIs) {
  CpuSpread spread;
  OnThread(two_, [&] { spread.Take(); });
  cpu_set_t only_zero;
  CPU_ZERO(&only_zero);
  CPU_SET(0, &only_zero);
  OnThread(only_zero, [&] {
    CpuSpread::Stay stay = spread.Join();
    EXPECT_FALSE(stay.moved());
    EXPECT_EQ(sched_getcpu(), 0);
  });
}

TEST_F(CpuSpreadTest, AThreadOnAFreeCpuStaysThere) {
  CpuSpread spread;
  OnThread(two_, [&] {
    CpuSpread::Stay stay = spread.Join();  // the first: CPU 0 is its own
    EXPECT_FALSE(stay.moved());
  });
  EXPECT_EQ(spread.taken(), 1u);
}

}  // namespace
}  // namespace elasticjob::infra
