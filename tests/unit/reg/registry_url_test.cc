#include "reg/registry_url.h"

#include <gtest/gtest.h>

#include "reg/registry_base.h"

namespace elasticjob::reg {
namespace {

TEST(RegistryUrlTest, ZooKeeperWithElasticJobDefaults) {
  auto u = ParseRegistryUrl("zookeeper://10.0.0.1:2181,10.0.0.2:2181/demo");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->scheme, RegistryUrl::Scheme::kZooKeeper);
  EXPECT_EQ(u->servers, "10.0.0.1:2181,10.0.0.2:2181");
  EXPECT_EQ(u->name_space, "demo");
  EXPECT_EQ(u->session_timeout_ms, 60000);
  EXPECT_EQ(u->connection_timeout_ms, 15000);
  EXPECT_EQ(u->base_sleep_ms, 1000);
  EXPECT_EQ(u->max_sleep_ms, 3000);
  EXPECT_EQ(u->max_retries, 3);
  EXPECT_EQ(u->cache_batch_ms, 10);
  EXPECT_TRUE(u->digest.empty());
}

TEST(RegistryUrlTest, ZooKeeperParameters) {
  auto u = ParseRegistryUrl(
      "zookeeper://127.0.0.1:2181/ns?digest=user:pass&sessionTimeoutMs=5000&connectionTimeoutMs=700"
      "&baseSleepMs=10&maxSleepMs=20&maxRetries=7&cacheBatchMs=0");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->digest, "user:pass");
  EXPECT_EQ(u->session_timeout_ms, 5000);
  EXPECT_EQ(u->connection_timeout_ms, 700);
  EXPECT_EQ(u->base_sleep_ms, 10);
  EXPECT_EQ(u->max_sleep_ms, 20);
  EXPECT_EQ(u->max_retries, 7);
  EXPECT_EQ(u->cache_batch_ms, 0);
}

TEST(RegistryUrlTest, Memory) {
  auto u = ParseRegistryUrl("memory://demo");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->scheme, RegistryUrl::Scheme::kMemory);
  EXPECT_EQ(u->name_space, "demo");
}

TEST(RegistryUrlTest, ErrorsNameThePart) {
  auto err = [](const char* url) {
    auto u = ParseRegistryUrl(url);
    EXPECT_FALSE(u.ok()) << url;
    return u.ok() ? std::string() : u.status().message();
  };
  EXPECT_NE(err("redis://x/y").find("expected zookeeper://"), std::string::npos);
  EXPECT_NE(err("zookeeper://127.0.0.1:2181").find("missing /namespace"), std::string::npos);
  EXPECT_NE(err("zookeeper://host/ns").find("server 'host' is not host:port"), std::string::npos);
  EXPECT_NE(err("zookeeper://h:99999/ns").find("server 'h:99999'"), std::string::npos);
  EXPECT_NE(err("zookeeper://h:1/a/b").find("namespace 'a/b'"), std::string::npos);
  EXPECT_NE(err("memory://").find("namespace ''"), std::string::npos);
  EXPECT_NE(err("zookeeper://h:1/ns?colour=red").find("unknown parameter 'colour'"),
            std::string::npos);
  EXPECT_NE(err("zookeeper://h:1/ns?maxRetries=-1")
                .find("maxRetries must be a non-negative integer, got '-1'"),
            std::string::npos);
  EXPECT_NE(err("zookeeper://h:1/ns?digest=nopassword").find("digest must be user:password"),
            std::string::npos);
}

TEST(RegistryUrlTest, ADigestIsNeverInAMessage) {
  EXPECT_EQ(
      RedactRegistryUrl("zookeeper://h:1/ns?sessionTimeoutMs=5&digest=ops:s3cret&maxRetries=2"),
      "zookeeper://h:1/ns?sessionTimeoutMs=5&digest=***&maxRetries=2");
  EXPECT_EQ(RedactRegistryUrl("zookeeper://h:1/ns?digest=ops:s3cret"),
            "zookeeper://h:1/ns?digest=***");
  EXPECT_EQ(RedactRegistryUrl("memory://ns"), "memory://ns");
  auto bad = ParseRegistryUrl("zookeeper://h:1/ns?digest=ops:s3cret&maxRetries=x");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().find("s3cret"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("maxRetries"), std::string::npos);
}

TEST(RegistryKeyTest, Validation) {
  EXPECT_TRUE(ValidateKey("/").ok());
  EXPECT_TRUE(ValidateKey("/job/sharding/0/running").ok());
  for (const char* bad : {"", "job", "/job/", "//", "/a//b", "/a/./b", "/a/.."}) {
    EXPECT_EQ(ValidateKey(bad).code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ParentKey("/a/b"), "/a");
  EXPECT_EQ(ParentKey("/a"), "/");
}

}  // namespace
}  // namespace elasticjob::reg
