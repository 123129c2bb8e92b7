#include "trigger/prepare_lead.h"

#include <gtest/gtest.h>

namespace elasticjob::trigger {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const Clock::WallTime kT0 = Clock::WallTime{} + seconds(1000);

TEST(PrepareLeadTest, ClaimsAnsweredWellAheadKeepTheBaseLead) {
  PrepareLead lead;
  EXPECT_EQ(lead.lead(), milliseconds(200));
  for (int i = 0; i < 100; ++i) lead.Observe(kT0 + milliseconds(i * 100), milliseconds(3));
  EXPECT_EQ(lead.lead(), milliseconds(200));
}

TEST(PrepareLeadTest, AClaimAnsweredLateRaisesTheLeadAtOnceToHalfAgainWhatItTookAndTheMargin) {
  PrepareLead lead;
  lead.Observe(kT0, milliseconds(300));
  EXPECT_EQ(lead.lead(), milliseconds(300 + 150) + PrepareLead::kMargin);
  // A faster claim in the same window changes nothing.
  lead.Observe(kT0 + milliseconds(1), milliseconds(10));
  EXPECT_EQ(lead.lead(), milliseconds(450) + PrepareLead::kMargin);
}

TEST(PrepareLeadTest, TheLeadNeverExceedsItsMaximum) {
  PrepareLead lead(milliseconds(200), seconds(1));
  lead.Observe(kT0, seconds(5));
  EXPECT_EQ(lead.lead(), seconds(1));
}

TEST(PrepareLeadTest, AWindowOfFastClaimsHalvesTheWayBackToTheBase) {
  PrepareLead lead;
  lead.Observe(kT0, milliseconds(500));  // asks 800 ms
  ASSERT_EQ(lead.lead(), milliseconds(800));
  Clock::WallTime at = kT0;
  std::vector<milliseconds> seen;
  for (int window = 1; window <= 8; ++window) {
    at += PrepareLead::kWindow;
    lead.Observe(at, milliseconds(2));
    seen.push_back(std::chrono::duration_cast<milliseconds>(lead.lead()));
  }
  EXPECT_EQ(seen[0], milliseconds(800));  // the burst's own window asked 800
  EXPECT_EQ(seen[1], milliseconds(500));  // halfway from 800 to 200
  EXPECT_EQ(seen[2], milliseconds(350));
  EXPECT_EQ(seen[3], milliseconds(275));
  EXPECT_LE(seen[7].count(), 205);
  EXPECT_GE(seen[7], milliseconds(200));
}

TEST(PrepareLeadTest, ALoadThatLastsKeepsTheLeadItNeeds) {
  PrepareLead lead;
  Clock::WallTime at = kT0;
  for (int second = 0; second < 60; ++second) {
    // Each second a burst of claims: the last answered 300 ms after its preparation was due.
    for (int i = 0; i <= 30; ++i) lead.Observe(at + milliseconds(i * 10), milliseconds(i * 10));
    at += seconds(1);
    EXPECT_EQ(lead.lead(), milliseconds(450) + PrepareLead::kMargin) << "second " << second;
  }
}

TEST(PrepareLeadTest, AWallClockSetBackStartsANewWindowInsteadOfHoldingTheLead) {
  PrepareLead lead;
  lead.Observe(kT0, milliseconds(500));
  ASSERT_EQ(lead.lead(), milliseconds(800));
  const Clock::WallTime back = kT0 - seconds(3600);
  lead.Observe(back, milliseconds(2));
  lead.Observe(back + PrepareLead::kWindow, milliseconds(2));
  EXPECT_EQ(lead.lead(), milliseconds(500));
}

TEST(PrepareLeadTest, ANegativeTimeCountsAsNone) {
  PrepareLead lead;
  lead.Observe(kT0, milliseconds(-400));
  EXPECT_EQ(lead.lead(), milliseconds(200));
}

}  // namespace
}  // namespace elasticjob::trigger
