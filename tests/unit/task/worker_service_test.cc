// The TaskWorker endpoint on loopback (no registry, no store): AwaitRun waits for a run's
// batches in progress and fences off an older coordinator's; a batch that asks the worker to
// record its outcomes needs a shared store.
#include "task/worker_service.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace elasticjob::task {
namespace {

// Each sub-task blocks until released.
class GateJob final : public MapJob {
 public:
  std::mutex mu;
  std::condition_variable cv;
  bool started = false;
  bool release = false;
  bool returned = false;
  TaskResult Process(TaskContext&) override {
    std::unique_lock<std::mutex> lock(mu);
    started = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
    returned = true;
    return {true, "ok"};
  }
};

class WorkerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    job_ = std::make_shared<GateJob>();
    auto server = WorkerServer::Start(
        "127.0.0.1:0", std::make_unique<WorkerService>(job_, "job", "w@-@1", TaskSettings{}));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(server).value();
    stub_ = rpc::TaskWorker::NewStub(
        grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    Release();
    server_.reset();
  }
  void Release() {
    std::lock_guard<std::mutex> lock(job_->mu);
    job_->release = true;
    job_->cv.notify_all();
  }
  static rpc::RunTasksRequest Batch(const std::string& run, uint64_t epoch) {
    rpc::RunTasksRequest r;
    r.set_job_name("job");
    r.set_run_id(run);
    r.set_epoch(epoch);
    rpc::Task* t = r.add_tasks();
    t->set_id(1);
    t->set_name("N");
    t->set_attempt(1);
    return r;
  }
  grpc::Status Await(const std::string& run, uint64_t epoch) {
    grpc::ClientContext ctx;
    rpc::AwaitRunRequest req;
    req.set_job_name("job");
    req.set_run_id(run);
    req.set_epoch(epoch);
    rpc::AwaitRunReply reply;
    return stub_->AwaitRun(&ctx, req, &reply);
  }

  std::shared_ptr<GateJob> job_;
  std::unique_ptr<WorkerServer> server_;
  std::unique_ptr<rpc::TaskWorker::Stub> stub_;
};

TEST_F(WorkerServiceTest, AwaitRunAnswersOnceTheRunsBatchInProgressHasEnded) {
  grpc::Status batch_status;
  std::thread batch([&] {
    grpc::ClientContext ctx;
    rpc::RunTasksReply reply;
    batch_status = stub_->RunTasks(&ctx, Batch("run-1", 0), &reply);
  });
  {
    std::unique_lock<std::mutex> lock(job_->mu);
    job_->cv.wait(lock, [&] { return job_->started; });
  }
  bool returned_before_answer = false;
  grpc::Status await_status;
  std::thread await([&] {
    await_status = Await("run-1", 1);
    std::lock_guard<std::mutex> lock(job_->mu);
    returned_before_answer = job_->returned;
  });
  Release();
  await.join();
  batch.join();
  EXPECT_TRUE(await_status.ok()) << await_status.error_message();
  EXPECT_TRUE(returned_before_answer) << "AwaitRun answered while the batch was still running";
  EXPECT_TRUE(batch_status.ok()) << batch_status.error_message();
}

TEST_F(WorkerServiceTest, AfterAwaitRunABatchOfAnOlderCoordinatorIsRefused) {
  Release();
  ASSERT_TRUE(Await("run-1", 2).ok());
  grpc::ClientContext old_ctx;
  rpc::RunTasksReply reply;
  grpc::Status old = stub_->RunTasks(&old_ctx, Batch("run-1", 1), &reply);
  EXPECT_EQ(old.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(old.error_message(), "run run-1: a newer coordinator took it over");
  grpc::ClientContext new_ctx;
  EXPECT_TRUE(stub_->RunTasks(&new_ctx, Batch("run-1", 2), &reply).ok());
  grpc::ClientContext other_ctx;
  EXPECT_TRUE(stub_->RunTasks(&other_ctx, Batch("run-2", 0), &reply).ok());
}

TEST_F(WorkerServiceTest, ABatchToRecordNeedsASharedStore) {
  Release();
  rpc::RunTasksRequest r = Batch("run-1", 0);
  r.set_worker_records(true);
  r.set_max_attempts(3);
  grpc::ClientContext ctx;
  rpc::RunTasksReply reply;
  grpc::Status s = stub_->RunTasks(&ctx, r, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("has no shared task store"), std::string::npos)
      << s.error_message();
}

}  // namespace
}  // namespace elasticjob::task
