// The shared task store against a real PostgreSQL server (scripts/pg-server.sh, a free port,
// a temp dir): what a new coordinator finds when it resumes a run its predecessor left.
#include "task/postgresql/pg_task_store.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace elasticjob::task {
namespace {

std::string RunCommand(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buf[256];
  while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
  if (pclose(p) != 0) return "";
  return out;
}

class PgTaskStoreTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/ej-task-store-XXXXXX";
    dir_ = new std::string(mkdtemp(tmpl));
    if (RunCommand("bash " ELASTICJOB_SCRIPTS "/pg-server.sh start " + *dir_).empty()) return;
    std::ifstream f(*dir_ + "/url");
    url_ = new std::string;
    std::getline(f, *url_);
  }
  static void TearDownTestSuite() {
    RunCommand("bash " ELASTICJOB_SCRIPTS "/pg-server.sh stop " + *dir_ + " 2>&1");
    std::filesystem::remove_all(*dir_);
    delete dir_;
    delete url_;
  }
  void SetUp() override { ASSERT_NE(url_, nullptr) << "PostgreSQL did not start"; }

  std::unique_ptr<PgTaskStore> Connect() {
    auto s = PgTaskStore::Connect(*url_, "job", 3);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(s).value() : nullptr;
  }

  static std::string* dir_;
  static std::string* url_;
};
std::string* PgTaskStoreTest::dir_ = nullptr;
std::string* PgTaskStoreTest::url_ = nullptr;

TEST_F(PgTaskStoreTest, AResumedRunKeepsWhatWasDoneAndSendsTheInFlightAgain) {
  {
    auto first = Connect();
    ASSERT_NE(first, nullptr);
    ASSERT_TRUE(first->Create("run-1").ok());
    std::vector<std::string> p{"a", "b", "c"};
    ASSERT_TRUE(first->Add("N", p).ok());
    ASSERT_TRUE(first->MarkRootDone().ok());
    ASSERT_TRUE(first->Begin().ok());
    auto sent = first->TakePending(2);
    ASSERT_TRUE(sent.ok());
    ASSERT_EQ(sent->size(), 2u);
    EXPECT_EQ(*first->Record(1, true, "one"), TaskStore::Recorded::kFirst);
    ASSERT_TRUE(first->Commit().ok());
  }  // the coordinator is gone: sub-task 2 was in flight
  auto next = Connect();
  ASSERT_NE(next, nullptr);
  auto resumed = next->Resume("run-1");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_TRUE(*resumed);
  EXPECT_TRUE(next->resumed());
  EXPECT_EQ(next->total(), 3);
  EXPECT_EQ(next->done(), 1);
  EXPECT_EQ(next->pending(), 2);
  EXPECT_EQ(next->redispatched(), 1);
  ASSERT_TRUE(next->Begin().ok());
  auto again = next->TakePending(10);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 2u);
  EXPECT_EQ(again->at(0).id, 2u);
  EXPECT_EQ(again->at(0).attempt, 1);  // the lost dispatch does not count
  EXPECT_EQ(again->at(1).id, 3u);
  // A late outcome for the sub-task done before changes nothing.
  EXPECT_EQ(*next->Record(1, true, "late"), TaskStore::Recorded::kDuplicate);
  EXPECT_EQ(*next->Record(2, true, "two"), TaskStore::Recorded::kFirst);
  EXPECT_EQ(*next->Record(3, false, "boom"), TaskStore::Recorded::kRetry);
  ASSERT_TRUE(next->Commit().ok());
  auto last = next->TakePending(10);
  ASSERT_TRUE(last.ok());
  ASSERT_EQ(last->size(), 1u);
  EXPECT_EQ(*next->Record(3, true, "three"), TaskStore::Recorded::kFirst);
  std::vector<std::string> results;
  ASSERT_TRUE(next->ForEach([&](const SubtaskResult& r) {
                    results.push_back(std::to_string(r.id) + "=" + r.data);
                  })
                  .ok());
  EXPECT_EQ(results, (std::vector<std::string>{"1=one", "2=two", "3=three"}));
  EXPECT_EQ(next->retried(), 1);
  ASSERT_TRUE(next->Finish().ok());
  auto gone = Connect();
  ASSERT_NE(gone, nullptr);
  EXPECT_FALSE(*gone->Resume("run-1"));
}

TEST_F(PgTaskStoreTest, ARunLostBeforeItsRootFinishedIsNotResumed) {
  {
    auto first = Connect();
    ASSERT_NE(first, nullptr);
    ASSERT_TRUE(first->Create("run-2").ok());
    std::vector<std::string> p{"a", "b"};
    ASSERT_TRUE(first->Add("N", p).ok());
  }
  auto next = Connect();
  ASSERT_NE(next, nullptr);
  auto resumed = next->Resume("run-2");
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_FALSE(*resumed);
  EXPECT_FALSE(next->resumed());
  // Its rows are gone: the run may start again from the root, under the same id even.
  ASSERT_TRUE(next->Create("run-2").ok());
  EXPECT_EQ(next->total(), 0);
  ASSERT_TRUE(next->Finish().ok());
}

TEST_F(PgTaskStoreTest, ACoordinatorWhoseRunWasTakenOverChangesNothing) {
  auto old = Connect();
  ASSERT_NE(old, nullptr);
  ASSERT_TRUE(old->Create("run-3").ok());
  std::vector<std::string> p{"a", "b"};
  ASSERT_TRUE(old->Add("N", p).ok());
  ASSERT_TRUE(old->MarkRootDone().ok());
  ASSERT_TRUE(old->Begin().ok());
  ASSERT_EQ(old->TakePending(10)->size(), 2u);
  ASSERT_TRUE(old->Commit().ok());
  // A new coordinator resumes the run while the old one is still at it (its session lost,
  // not noticed yet).
  auto next = Connect();
  ASSERT_NE(next, nullptr);
  ASSERT_TRUE(*next->Resume("run-3"));
  ASSERT_TRUE(old->Begin().ok());
  ASSERT_EQ(*old->Record(1, true, "stale"), TaskStore::Recorded::kDuplicate);  // pending now
  ASSERT_EQ(old->TakePending(10)->size(), 2u);  // would strand them as dispatched: rolled back
  Status s = old->Commit();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("run run-3 was taken over by another coordinator"), std::string::npos)
      << s;
  EXPECT_EQ(old->Finish().code(), StatusCode::kFailedPrecondition);
  // The new one's run is whole.
  ASSERT_TRUE(next->Begin().ok());
  auto sent = next->TakePending(10);
  ASSERT_TRUE(sent.ok());
  ASSERT_EQ(sent->size(), 2u);
  EXPECT_EQ(*next->Record(1, true, "one"), TaskStore::Recorded::kFirst);
  ASSERT_TRUE(next->Commit().ok());
  ASSERT_TRUE(next->Finish().ok());
}

TEST(PgTaskStoreUrlTest, AnUnreachableStoreFailsNamingItWithoutThePassword) {
  auto s = PgTaskStore::Connect("postgresql://u:secret@127.0.0.1:1/db", "job", 3);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(s.status().message().find("task store 'postgresql://u:***@127.0.0.1:1/db': cannot "
                                      "connect"),
            std::string::npos)
      << s.status();
  EXPECT_EQ(s.status().message().find("secret"), std::string::npos);
}

}  // namespace
}  // namespace elasticjob::task
