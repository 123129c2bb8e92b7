#include "task/task_store.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "task/task_settings.h"

namespace elasticjob::task {
namespace {

std::unique_ptr<TaskStore> Open(int attempts) {
  auto s = TaskStore::OpenTemp(attempts);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(s).value();
}

TEST(TaskStoreTest, TakesPendingInIdOrderAndMarksThemDispatched) {
  auto store = Open(3);
  std::vector<std::string> p{"a", "b", "c"};
  ASSERT_TRUE(store->Add("N", p).ok());
  EXPECT_EQ(store->total(), 3);
  auto first = store->TakePending(2);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ((*first)[0].payload, "a");
  EXPECT_EQ((*first)[0].name, "N");
  EXPECT_EQ((*first)[0].attempt, 1);
  auto rest = store->TakePending(10);
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].payload, "c");
  EXPECT_TRUE(store->TakePending(10)->empty());
  EXPECT_EQ(store->pending(), 0);
}

TEST(TaskStoreTest, BatchStopsAtTheByteBoundButTakesOneAtLeast) {
  auto store = Open(3);
  std::vector<std::string> p{std::string(10, 'x'), std::string(10, 'y'), std::string(10, 'z')};
  ASSERT_TRUE(store->Add("N", p).ok());
  EXPECT_EQ(store->TakePending(10, 5)->size(), 1u);
  EXPECT_EQ(store->TakePending(10, 20)->size(), 2u);
}

TEST(TaskStoreTest, FirstOutcomeWinsAndADuplicateIsIgnored) {
  auto store = Open(3);
  std::vector<std::string> p{"1"};
  ASSERT_TRUE(store->Add("N", p).ok());
  auto t = store->TakePending(1);
  uint64_t id = (*t)[0].id;
  EXPECT_EQ(*store->Record(id, true, "r1"), TaskStore::Recorded::kFirst);
  EXPECT_EQ(*store->Record(id, true, "r2"), TaskStore::Recorded::kDuplicate);
  EXPECT_EQ(*store->Record(id, false, "late"), TaskStore::Recorded::kDuplicate);
  EXPECT_EQ(*store->Record(999, true, ""), TaskStore::Recorded::kDuplicate);
  std::vector<SubtaskResult> seen;
  ASSERT_TRUE(store->ForEach([&](const SubtaskResult& r) { seen.push_back(r); }).ok());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].data, "r1");
  EXPECT_TRUE(seen[0].success);
}

TEST(TaskStoreTest, AFailureIsRetriedUntilTheLastAttemptThenReported) {
  auto store = Open(2);
  std::vector<std::string> p{"1"};
  ASSERT_TRUE(store->Add("N", p).ok());
  uint64_t id = (*store->TakePending(1))[0].id;
  EXPECT_EQ(*store->Record(id, false, "boom 1"), TaskStore::Recorded::kRetry);
  EXPECT_EQ(store->pending(), 1);
  auto again = store->TakePending(1);
  EXPECT_EQ((*again)[0].attempt, 2);
  EXPECT_EQ(*store->Record(id, false, "boom 2"), TaskStore::Recorded::kFailed);
  EXPECT_EQ(store->failed(), 1);
  EXPECT_EQ(store->retried(), 1);
  std::vector<SubtaskResult> seen;
  ASSERT_TRUE(store->ForEach([&](const SubtaskResult& r) { seen.push_back(r); }).ok());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_FALSE(seen[0].success);
  EXPECT_EQ(seen[0].data, "boom 2");
}

TEST(TaskStoreTest, RequeueOfANotDispatchedSubtaskChangesNothing) {
  auto store = Open(3);
  std::vector<std::string> p{"1"};
  ASSERT_TRUE(store->Add("N", p).ok());
  uint64_t id = (*store->TakePending(1))[0].id;
  EXPECT_EQ(*store->Requeue(id, "worker lost"), TaskStore::Recorded::kRetry);
  EXPECT_EQ(*store->Requeue(id, "worker lost"), TaskStore::Recorded::kDuplicate);
  EXPECT_EQ(store->pending(), 1);
}

TEST(TaskStoreTest, TheFileGoesWithTheStore) {
  std::string path;
  {
    auto store = Open(1);
    path = store->path();
    EXPECT_EQ(access(path.c_str(), F_OK), 0);
  }
  EXPECT_NE(access(path.c_str(), F_OK), 0);
}

TEST(TaskSettingsTest, ReadsPropsAndNamesABadOne) {
  auto s = TaskSettings::FromProps({{"task.max.attempts", "5"}, {"task.batch.size", "10"}});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->max_attempts, 5);
  EXPECT_EQ(s->batch_size, 10);
  EXPECT_EQ(s->max_inflight_batches, 2);
  auto bad = TaskSettings::FromProps({{"task.max.inflight.batches", "many"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "props: task.max.inflight.batches: 'many' is not an integer in [1, 1000]");
  EXPECT_FALSE(TaskSettings::FromProps({{"task.max.attempts", "0"}}).ok());
}

TEST(TaskSettingsTest, MapRefusesAnOversizePayloadAndReservedNames) {
  std::vector<Subtask> ok{{"abc"}};
  EXPECT_TRUE(ValidateMap(ok, "PART", 3).ok());
  std::vector<Subtask> big{{"ab"}, {"abcd"}};
  Status s = ValidateMap(big, "PART", 3);
  EXPECT_EQ(s.message(),
            "Map 'PART': sub-task 1: payload of 4 bytes is over "
            "task.max.payload.bytes (3)");
  EXPECT_FALSE(ValidateMap(ok, "", 3).ok());
  EXPECT_FALSE(ValidateMap(ok, "ROOT_TASK", 3).ok());
}

}  // namespace
}  // namespace elasticjob::task
