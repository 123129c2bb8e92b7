// The upper bound on shardingTotalCount (kMaxShardingTotalCount, docs/config.md) against a
// real ZooKeeper server with its default request limit (jute.maxbuffer, 1 MiB): the largest
// multi-op the runtime writes for one job, the leader's sharding commit, must fit with the
// longest names we allow for, and the measured ceiling is reported so docs/config.md can
// quote it. The commit here ends with a check of a missing node, so the server reads the
// whole request and then rejects it (NOT_FOUND) without writing: a request over the limit
// is a dropped connection instead (CONNECTION_LOSS).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <iostream>

#include "elasticjob/config/job_configuration.h"
#include "elasticjob/reg/registry_center.h"
#include "reg/zk_test_server.h"
#include "sharding/sharding_node.h"
#include "storage/job_node_path.h"

namespace elasticjob {
namespace {

// The longest instance id: an IPv4 address and Linux's largest pid (2^22).
const std::string kLongestInstanceId = "255.255.255.255@-@4194304";

// The leader's sharding commit (ShardingService::TryShardAsLeader) on a fresh job, its
// largest form: every item node created, then every owner node.
std::vector<TransactionOp> ShardingCommit(const std::string& job, int items) {
  storage::JobNodePath path(job);
  std::vector<TransactionOp> ops = {TransactionOp::CheckExists("/")};
  for (int i = 0; i < items; ++i) {
    ops.push_back(TransactionOp::Create(path.FullPath(sharding::ItemNode(i)), ""));
  }
  for (int i = 0; i < items; ++i) {
    ops.push_back(
        TransactionOp::Create(path.FullPath(sharding::InstanceNode(i)), kLongestInstanceId));
  }
  ops.push_back(TransactionOp::Delete(path.FullPath(sharding::kNecessary)));
  ops.push_back(TransactionOp::Delete(path.FullPath(sharding::kProcessing)));
  ops.push_back(TransactionOp::CheckExists("/never/there"));  // read in full, never applied
  return ops;
}

class ItemBoundTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status up = server_.Start();
    ASSERT_TRUE(up.ok()) << up;
  }
  // A client of namespace `ns` that does not retry: one attempt per request.
  std::unique_ptr<RegistryCenter> Client(const std::string& ns, const std::string& digest) {
    std::string params =
        "sessionTimeoutMs=10000&connectionTimeoutMs=5000&baseSleepMs=100&maxSleepMs=500&"
        "maxRetries=0";
    if (!digest.empty()) params += "&digest=" + digest;
    auto r = NewRegistryCenter(server_.Url(ns, params));
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return nullptr;
    Status s = (*r)->Init();
    EXPECT_TRUE(s.ok()) << s;
    return std::move(r).value();
  }
  // Whether the commit of `items` items reached the server and was read in full.
  bool Fits(RegistryCenter& reg, const std::string& job, int items) {
    Status s = reg.ExecuteInTransaction(ShardingCommit(job, items));
    if (s.code() == StatusCode::kNotFound) return true;
    EXPECT_EQ(s.code(), StatusCode::kConnectionLoss) << s;
    // The server dropped the connection: wait for the client to be back (bounded).
    for (int i = 0; i < 100 && !reg.ExecuteInTransaction({TransactionOp::CheckExists("/")}).ok();
         ++i) {
    }
    return false;
  }
  // The largest item count whose commit fits (binary search; at most 2^17).
  int Ceiling(RegistryCenter& reg, const std::string& job) {
    int lo = 1, hi = 1 << 17;
    while (lo < hi) {
      int mid = lo + (hi - lo + 1) / 2;
      if (Fits(reg, job, mid)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  }

  testing::ZkTestServer server_;
};

TEST_F(ItemBoundTest, TheShardingCommitOfTheMaximumItemCountFitsWithLongNames) {
  // Long names: a namespace and a job name of 200 characters each, digest ACLs on.
  const std::string ns(200, 'n');
  const std::string job(200, 'j');
  auto reg = Client(ns, "user:secret");
  ASSERT_NE(reg, nullptr);
  EXPECT_TRUE(Fits(*reg, job, kMaxShardingTotalCount));
  const int ceiling = Ceiling(*reg, job);
  std::cout << fmt::format(
      "sharding commit ceiling, namespace and job name of 200 characters: {} items "
      "(bound {}, {:.1f}x margin)\n",
      ceiling, kMaxShardingTotalCount, double(ceiling) / kMaxShardingTotalCount);
  EXPECT_GE(ceiling, 2 * kMaxShardingTotalCount);
  // Far over the ceiling the request is refused: the limit this bound guards is real.
  EXPECT_FALSE(Fits(*reg, job, 2 * ceiling));
}

TEST_F(ItemBoundTest, ReportsTheCeilingForShortNames) {
  auto reg = Client("elasticjob", "");
  ASSERT_NE(reg, nullptr);
  const int ceiling = Ceiling(*reg, "orderSync");
  std::cout << fmt::format(
      "sharding commit ceiling, namespace 'elasticjob', job 'orderSync': {} items (bound {}, "
      "{:.1f}x margin)\n",
      ceiling, kMaxShardingTotalCount, double(ceiling) / kMaxShardingTotalCount);
  EXPECT_GE(ceiling, 4 * kMaxShardingTotalCount);
}

}  // namespace
}  // namespace elasticjob
