#include "elasticjob/status.h"

#include <gtest/gtest.h>

namespace elasticjob {
namespace {

TEST(StatusTest, OkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, CarriesCodeMessageAndContext) {
  Status s = InvalidArgument("shardingTotalCount: must be greater than 0, got -1");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.WithContext("job 'a'").message(),
            "job 'a': shardingTotalCount: must be greater than 0, got -1");
  EXPECT_EQ(s.ToString(), "INVALID_ARGUMENT: shardingTotalCount: must be greater than 0, got -1");
  EXPECT_TRUE(Status::Ok().WithContext("x").ok());
}

TEST(ResultTest, HoldsValueOrError) {
  Result<int> v = 7;
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 7);
  EXPECT_TRUE(v.status().ok());
  Result<int> e = NotFound("no node /a");
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(e.value_or(3), 3);
}

}  // namespace
}  // namespace elasticjob
