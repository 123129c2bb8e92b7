#include "schedule/zone_table.h"

#include <cctz/civil_time.h>
#include <gtest/gtest.h>

#include <random>

#include "elasticjob/schedule/time_zone.h"
#include "schedule/zone_rules.h"

namespace elasticjob::schedule {
namespace {

cctz::time_point<cctz::seconds> At(int64_t s) {
  return cctz::time_point<cctz::seconds>(cctz::seconds(s));
}

// The table must agree with cctz wherever it answers, and must not answer for a local time
// that cctz calls skipped or repeated. Checked at random instants and local times from 1880
// to 2300 and at one second either side of every transition.
class ZoneTableTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ZoneTableTest, AgreesWithCctzAndLeavesGapsAndOverlapsOut) {
  auto zone = TimeZone::Parse(GetParam());
  ASSERT_TRUE(zone.ok());
  const cctz::time_zone& tz = zone->rules().zone;
  const ZoneTable& table = zone->rules().table();
  std::vector<int64_t> points;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> any(-2840140800, 10413792000);  // 1880 to 2300
  for (int i = 0; i < 20000; ++i) points.push_back(any(rng));
  for (const ZoneSpan& s : table.spans()) {
    for (int64_t t : {s.utc_lo, s.utc_hi, s.local_lo, s.local_hi}) {
      for (int64_t d = -3601; d <= 3601; d += 1800) points.push_back(t + d);
      for (int64_t d : {-1, 0, 1}) points.push_back(t + d);
    }
  }
  int answered = 0;
  for (int64_t p : points) {
    if (p < -(int64_t{1} << 40) || p > (int64_t{1} << 40)) continue;
    if (const ZoneSpan* s = table.FindUtc(p)) {
      ASSERT_EQ(s->offset, tz.lookup(At(p)).offset) << GetParam() << " at " << p;
      ++answered;
    }
    cctz::civil_second cs = cctz::civil_second(1970, 1, 1, 0, 0, 0) + p;
    auto cl = tz.lookup(cs);
    if (const ZoneSpan* s = table.FindLocal(p)) {
      ASSERT_EQ(cl.kind, cctz::time_zone::civil_lookup::UNIQUE) << GetParam() << " local " << p;
      ASSERT_EQ(p - s->offset, cl.pre.time_since_epoch().count()) << GetParam() << " local " << p;
      ++answered;
    }
  }
  EXPECT_GT(answered, static_cast<int>(points.size()));  // most points, both ways
}

INSTANTIATE_TEST_SUITE_P(Zones, ZoneTableTest,
                         ::testing::Values("UTC", "GMT+08:00", "Asia/Shanghai", "America/New_York",
                                           "Europe/London", "Australia/Lord_Howe", "Pacific/Apia",
                                           "America/Havana", "Pacific/Chatham", "America/Sao_Paulo",
                                           "Europe/Dublin"));

}  // namespace
}  // namespace elasticjob::schedule
