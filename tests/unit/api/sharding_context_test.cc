#include "elasticjob/api/sharding_context.h"

#include <gtest/gtest.h>

namespace elasticjob {
namespace {

TEST(ShardingContextTest, TaskIdFormat) {
  EXPECT_EQ(BuildTaskId("orderSync", {0, 1, 2}, "10.0.0.5@-@4242"),
            "orderSync@-@0,1,2@-@READY@-@10.0.0.5@-@4242");
  EXPECT_EQ(BuildTaskId("j", {}, "1.2.3.4@-@1"), "j@-@@-@READY@-@1.2.3.4@-@1");
}

TEST(ShardingContextTest, JsonFieldOrderAsElasticJobSendsIt) {
  ShardingContext c{"orderSync", "orderSync@-@0@-@READY@-@10.0.0.5@-@4242", 3, "", 0, "Beijing"};
  EXPECT_EQ(
      ShardingContextToJson(c),
      R"({"jobName":"orderSync","taskId":"orderSync@-@0@-@READY@-@10.0.0.5@-@4242",)"
      R"("shardingTotalCount":3,"jobParameter":"","shardingItem":0,"shardingParameter":"Beijing"})");
}

TEST(ShardingContextTest, NullShardingParameterIsLeftOut) {
  ShardingContext c{"j", "t", 2, "p", 1, std::nullopt};
  EXPECT_EQ(
      ShardingContextToJson(c),
      R"({"jobName":"j","taskId":"t","shardingTotalCount":2,"jobParameter":"p","shardingItem":1})");
}

TEST(ShardingContextTest, EscapesAsGsonDoes) {
  ShardingContext c{"j", "t", 1, "a=b&c<d>'e\"f\\g\n\t\x01 订单 \xe2\x80\xa8", 0, std::nullopt};
  EXPECT_EQ(ShardingContextToJson(c),
            "{\"jobName\":\"j\",\"taskId\":\"t\",\"shardingTotalCount\":1,\"jobParameter\":"
            "\"a\\u003db\\u0026c\\u003cd\\u003e\\u0027e\\\"f\\\\g\\n\\t\\u0001 订单 \\u2028\","
            "\"shardingItem\":0}");
}

TEST(ShardingContextTest, JsonRoundTrips) {
  ShardingContext c{"订单", "t@-@0", 4, "x=1", 3, "Shanghai"};
  auto back = ShardingContextFromJson(ShardingContextToJson(c));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, c);
}

TEST(ShardingContextTest, FromJsonNamesTheBadField) {
  EXPECT_EQ(ShardingContextFromJson("[]").status().message(), "shardingContext: not a JSON object");
  EXPECT_EQ(ShardingContextFromJson(R"({"taskId":"t","shardingTotalCount":1,"shardingItem":0})")
                .status()
                .message(),
            "shardingContext: jobName is missing");
  EXPECT_EQ(ShardingContextFromJson(
                R"({"jobName":"j","taskId":"t","shardingTotalCount":"1","shardingItem":0})")
                .status()
                .message(),
            "shardingContext: shardingTotalCount must be an integer, got \"1\"");
}

TEST(ShardingContextTest, IntegersOutsideIntAreRefusedNotWrapped) {
  // get<int>() wrapped these round: 4294967296 read as item 0.
  for (const char* n : {"4294967296", "2147483648", "-2147483649", "18446744073709551615"}) {
    auto c = ShardingContextFromJson(
        std::string(R"({"jobName":"j","taskId":"t","shardingTotalCount":1,"shardingItem":)") + n +
        "}");
    ASSERT_FALSE(c.ok()) << n;
    EXPECT_EQ(c.status().message(),
              std::string("shardingContext: shardingItem must be an integer, got ") + n);
  }
  auto edge = ShardingContextFromJson(
      R"({"jobName":"j","taskId":"t","shardingTotalCount":2147483647,"shardingItem":-2147483648})");
  ASSERT_TRUE(edge.ok()) << edge.status();
  EXPECT_EQ(edge->sharding_total_count, 2147483647);
  EXPECT_EQ(edge->sharding_item, -2147483648);
}

}  // namespace
}  // namespace elasticjob
