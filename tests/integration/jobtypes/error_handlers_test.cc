// Error handlers against real local endpoints: the DingTalk and WeCom robots (an HTTP server
// that checks the body and recomputes the signature), hostile endpoints, and an SMTP server
// (python3-aiosmtpd) with STARTTLS and implicit TLS.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "elasticjob/bootstrap/one_off_job_bootstrap.h"
#include "error_handler/job_error_handler.h"
#include "error_handler/notification_sender.h"
#include "integration/jobtypes/test_servers.h"
#include "unit/bootstrap/runtime_test_support.h"
#include "unit/infra/capturing_logger.h"

namespace elasticjob {
namespace {

using namespace std::chrono_literals;
using error_handler::JobFailure;
using error_handler::NewJobErrorHandler;
using error_handler::NotificationSender;
using test_support::Received;
using test_support::TestHttpServer;

class ThrowingJob final : public SimpleJob {
 public:
  void Execute(const ShardingContext&) override { throw std::runtime_error("disk full"); }
};

// base64(HmacSHA256(secret, timestamp + "\n" + secret)), computed here on its own.
std::string ExpectedSign(const std::string& timestamp, const std::string& secret) {
  const std::string data = timestamp + "\n" + secret;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &len);
  unsigned char out[128];
  int n = EVP_EncodeBlock(out, mac, static_cast<int>(len));
  return std::string(reinterpret_cast<char*>(out), static_cast<size_t>(n));
}

class ErrorHandlersTest : public test_support::RuntimeTest {
 protected:
  JobConfiguration Failing(const std::string& type, std::map<std::string, std::string> props) {
    JobConfiguration c = Config(1);
    c.job_error_handler_type = type;
    c.props = std::move(props);
    return c;
  }
};

TEST_F(ErrorHandlersTest, DingTalkPostsTheKeywordMessageWithAValidSignature) {
  const std::string secret = "SEC0123456789abcdef";
  TestHttpServer server([&](const Received& r) {
    auto ts = r.params.count("timestamp") != 0 ? r.params.at("timestamp") : "";
    auto sign = r.params.count("sign") != 0 ? r.params.at("sign") : "";
    if (r.params.count("access_token") == 0 || ts.empty() || sign != ExpectedSign(ts, secret)) {
      return std::make_pair(200, std::string(R"({"errcode":310000,"errmsg":"sign not match"})"));
    }
    return std::make_pair(200, std::string(R"({"errcode":0,"errmsg":"ok"})"));
  });
  auto& sender = NotificationSender::Shared();
  const size_t sent = sender.sent();
  auto reg = Session();
  ScheduleJobBootstrap boot(
      *reg, std::make_shared<ThrowingJob>(),
      Failing("DINGTALK", {{"dingtalk.webhook", server.Url() + "/robot/send?access_token=TOKEN"},
                           {"dingtalk.keyword", "[ej]"},
                           {"dingtalk.secret", secret}}),
      Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(1));
  EXPECT_FALSE(rec_.runs()[0].success);  // the handler notifies; the item is still failed
  ASSERT_TRUE(server.WaitRequests(1));
  sender.WaitIdle();
  EXPECT_EQ(sender.sent(), sent + 1);  // errcode 0: the signature matched
  const Received got = server.received()[0];
  EXPECT_EQ(got.method, "POST");
  EXPECT_EQ(got.path, "/robot/send");
  EXPECT_EQ(got.content_type, "application/json; charset=UTF-8");
  auto body = nlohmann::json::parse(got.body);
  EXPECT_EQ(body["msgtype"], "text");
  EXPECT_EQ(body["text"]["content"],
            "[ej]Job 'job' exception occur in job processing, caused by disk full");
}

TEST_F(ErrorHandlersTest, WeChatErrcodeNotZeroIsAFailedSendAndTheJobGoesOn) {
  TestHttpServer server([](const Received&) {
    return std::make_pair(200, std::string(R"({"errcode":93000,"errmsg":"invalid webhook url"})"));
  });
  auto& sender = NotificationSender::Shared();
  const size_t failed = sender.failed();
  auto reg = Session();
  ScheduleJobBootstrap boot(
      *reg, std::make_shared<ThrowingJob>(),
      Failing("WECHAT", {{"wechat.webhook", server.Url() + "/cgi-bin/"
                                                           "webhook/send?key=K"}}),
      Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(1));
  ASSERT_TRUE(server.WaitRequests(1));
  sender.WaitIdle();
  EXPECT_EQ(sender.failed(), failed + 1);
  auto body = nlohmann::json::parse(server.received()[0].body);
  EXPECT_EQ(body["text"]["content"],
            "Job 'job' exception occur in job processing, caused by disk full");
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(2));  // the next trigger fires
}

// The threads of this process, as the kernel counts them.
int ThreadsOfThisProcess() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

TEST(NotificationSenderTest, StartsItsThreadWithTheFirstMessageAndEndsItWhenDestroyed) {
  const int before = ThreadsOfThisProcess();
  ASSERT_GT(before, 0);
  {
    NotificationSender sender;
    EXPECT_EQ(ThreadsOfThisProcess(), before);  // a LOG-only process has no sender thread
    std::atomic<int> sent{0};
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(sender.Post("test", [&sent] {
        ++sent;
        return Status::Ok();
      }));
    }
    sender.WaitIdle();
    EXPECT_EQ(sent.load(), 2);
    EXPECT_EQ(sender.sent(), 2u);
    EXPECT_EQ(ThreadsOfThisProcess(), before + 1);  // one, however many messages
  }
  EXPECT_EQ(ThreadsOfThisProcess(), before);
}

TEST_F(ErrorHandlersTest, HostileEndpointsAreFailedSendsWithinTheirTimeoutsAndNeverBlockHandle) {
  test_support::SilentPort silent;
  TestHttpServer status500(
      [](const Received&) { return std::make_pair(500, std::string("oops")); });
  TestHttpServer garbage(
      [](const Received&) { return std::make_pair(200, std::string("{not json")); });
  NotificationSender sender;
  std::vector<std::shared_ptr<error_handler::JobErrorHandler>> handlers;
  for (const std::string& url :
       {"http://127.0.0.1:" + std::to_string(test_support::RefusedPort()) + "/",
        "http://127.0.0.1:" + std::to_string(silent.port()) + "/", status500.Url() + "/",
        garbage.Url() + "/"}) {
    JobConfiguration c = Failing("WECHAT", {{"wechat.webhook", url},
                                            {"wechat.connectTimeoutMilliseconds", "500"},
                                            {"wechat.readTimeoutMilliseconds", "500"}});
    auto h = NewJobErrorHandler(c, sender);
    ASSERT_TRUE(h.ok()) << h.status();
    handlers.push_back(*h);
  }
  const auto start = std::chrono::steady_clock::now();
  for (auto& h : handlers) h->Handle(JobFailure{"job", 0, "10.0.0.1@-@1", "boom"});
  // Handle only queued: the silent endpoint alone takes its whole timeout.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 500ms);
  sender.WaitIdle();
  EXPECT_EQ(sender.failed(), 4u);
  EXPECT_EQ(sender.sent(), 0u);
  // Every send bounded by its timeouts (connect + read = 1 s at most each).
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s + 2s);
}

TEST_F(ErrorHandlersTest, AFullQueueDropsTheMessageWithALoggedLine) {
  test_support::SilentPort silent;
  NotificationSender sender(/*capacity=*/1);
  JobConfiguration c =
      Failing("WECHAT", {{"wechat.webhook", "http://127.0.0.1:" + std::to_string(silent.port())},
                         {"wechat.connectTimeoutMilliseconds", "100"},
                         {"wechat.readTimeoutMilliseconds", "100"}});
  auto h = NewJobErrorHandler(c, sender);
  ASSERT_TRUE(h.ok());
  for (int i = 0; i < 5; ++i) (*h)->Handle(JobFailure{"job", i, "i", "boom"});
  sender.WaitIdle();
  EXPECT_EQ(sender.sent(), 0u);
  EXPECT_EQ(sender.failed(), 5u);  // 1 or 2 sent and failed, the rest dropped
}

TEST_F(ErrorHandlersTest, WhatCouldNotBeSentIsLoggedToTheJobsLogger) {
  test_support::SilentPort silent;
  NotificationSender sender(/*capacity=*/1);
  auto logger = std::make_shared<test_support::CapturingLogger>();
  JobConfiguration c =
      Failing("WECHAT", {{"wechat.webhook", "http://127.0.0.1:" + std::to_string(silent.port())},
                         {"wechat.connectTimeoutMilliseconds", "100"},
                         {"wechat.readTimeoutMilliseconds", "100"}});
  auto h = NewJobErrorHandler(c, sender, logger);
  ASSERT_TRUE(h.ok());
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i) (*h)->Handle(JobFailure{"job", i, "i", "boom"});
  sender.WaitIdle();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  size_t dropped = 0, failed = 0;
  for (const auto& line : logger->lines()) {
    EXPECT_EQ(line.level, LogLevel::kWarn);
    dropped += line.message.find("not sent: the notification queue is full") != std::string::npos;
    failed += line.message.find("send failed") != std::string::npos;
  }
  EXPECT_GE(dropped, 1u);
  EXPECT_GE(failed, 1u);
  EXPECT_EQ(dropped + failed, 3u);
}

TEST_F(ErrorHandlersTest, PropsAreCheckedAtStartNamingThePropAndValue) {
  auto reg = Session();
  auto error = [&](const std::string& type, std::map<std::string, std::string> props) {
    ScheduleJobBootstrap boot(*reg, std::make_shared<ThrowingJob>(), Failing(type, props),
                              Options("10.0.0.1"));
    return boot.Schedule().message();
  };
  EXPECT_EQ(error("DINGTALK", {}),
            "job 'job': jobErrorHandlerType DINGTALK: props.dingtalk.webhook: missing");
  EXPECT_EQ(error("WECHAT", {{"wechat.webhook", "ftp://x"}}),
            "job 'job': jobErrorHandlerType WECHAT: props.wechat.webhook: expected an http:// "
            "or https:// URL, got 'ftp://x'");
  EXPECT_EQ(error("DINGTALK",
                  {{"dingtalk.webhook", "http://x"}, {"dingtalk.readTimeoutMilliseconds", "-5"}}),
            "job 'job': jobErrorHandlerType DINGTALK: props.dingtalk.readTimeoutMilliseconds: "
            "expected a positive integer, got '-5'");
  EXPECT_EQ(error("EMAIL", {{"email.host", "h"},
                            {"email.port", "smtp"},
                            {"email.from", "a@b"},
                            {"email.to", "c@d"}}),
            "job 'job': jobErrorHandlerType EMAIL: props.email.port: expected a positive "
            "integer, got 'smtp'");
  EXPECT_EQ(error("EMAIL", {{"email.host", "h"}, {"email.from", "a@b"}}),
            "job 'job': jobErrorHandlerType EMAIL: props.email.to: no recipient (email.to, "
            "email.cc and email.bcc are all empty)");
  EXPECT_EQ(error("PAGER", {}),
            "job 'job': jobErrorHandlerType: unknown type 'PAGER' (known: LOG, IGNORE, THROW, "
            "DINGTALK, WECHAT, EMAIL)");
}

TEST_F(ErrorHandlersTest, LogIgnoreAndThrowAllLeaveTheItemFailedAndTheJobRunning) {
  for (const std::string type : {"LOG", "IGNORE", "THROW"}) {
    auto reg = Session();
    auto h = NewJobErrorHandler(Failing(type, {}), NotificationSender::Shared());
    ASSERT_TRUE(h.ok());
    EXPECT_EQ((*h)->type(), type);
  }
  auto reg = Session();
  ScheduleJobBootstrap boot(*reg, std::make_shared<ThrowingJob>(), Failing("THROW", {}),
                            Options("10.0.0.1"));
  ASSERT_TRUE(boot.Schedule().ok());
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(1));
  EXPECT_FALSE(rec_.runs()[0].success);
  EXPECT_EQ(rec_.runs()[0].error, "disk full");
  clock_.Advance(1s);
  ASSERT_TRUE(rec_.WaitRuns(2));
}

TEST_F(ErrorHandlersTest, UnderThrowOneOffExecuteReturnsTheFailureToTheCaller) {
  auto reg = Session();
  JobConfiguration c = *JobConfiguration::Builder("job", 2).JobErrorHandlerType("THROW").Build();
  OneOffJobBootstrap throwing(*reg, std::make_shared<ThrowingJob>(), c, Options("10.0.0.1"));
  Status s = throwing.Execute();
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s;
  EXPECT_NE(s.message().find("failed on 10.0.0.1@-@"), std::string::npos) << s;
  EXPECT_NE(s.message().find("(jobErrorHandlerType THROW): disk full"), std::string::npos) << s;
  throwing.Shutdown();
  // Under LOG the failure is the items' report only: Execute returns once triggered.
  auto fine = Session();
  JobConfiguration l = *JobConfiguration::Builder("job2", 1).Build();
  OneOffJobBootstrap logging(*fine, std::make_shared<ThrowingJob>(), l, Options("10.0.0.1"));
  EXPECT_TRUE(logging.Execute().ok());
}

// --- EMAIL against python3-aiosmtpd ------------------------------------------------------

// The SMTP server script, started with `mode` (starttls or implicit), stopped by its pid.
class SmtpServer {
 public:
  SmtpServer(const std::string& mode, const std::string& cert, const std::string& key,
             const std::string& out) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], 1);
      close(fds[0]);
      execl(ELASTICJOB_SYSTEM_PYTHON, "python3", ELASTICJOB_SMTP_SERVER, mode.c_str(), cert.c_str(),
            key.c_str(), out.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[1]);
    // The script prints its port once it listens (a blocking read, bounded by its exit).
    std::string line;
    char c;
    while (read(fds[0], &c, 1) == 1 && c != '\n') line += c;
    close(fds[0]);
    port_ = std::atoi(line.c_str());
  }
  ~SmtpServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  int port() const { return port_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

class EmailTest : public ErrorHandlersTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(EmailTest, TheMailReachesTheServerNamingJobItemInstanceAndCause) {
  const std::string mode = GetParam();
  const std::string dir = ::testing::TempDir() + "/ej_smtp_" + mode + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  auto [cert, key] = test_support::ThrowawayCertificate(dir);
  ASSERT_FALSE(cert.empty());
  const std::string out = dir + "/mail.txt";
  SmtpServer server(mode, cert, key, out);
  ASSERT_GT(server.port(), 0) << "the SMTP server did not start (python3-aiosmtpd missing?)";
  NotificationSender sender;
  JobConfiguration c = Failing("EMAIL", {{"email.host", "127.0.0.1"},
                                         {"email.port", std::to_string(server.port())},
                                         {"email.useSsl", mode == "implicit" ? "true" : "false"},
                                         {"email.ssl.trust", "127.0.0.1"},
                                         {"email.username", "user"},
                                         {"email.password", "secret"},
                                         {"email.from", "ej@example.com"},
                                         {"email.to", "ops@example.com, dev@example.com"},
                                         {"email.bcc", "audit@example.com"}});
  auto h = NewJobErrorHandler(c, sender);
  ASSERT_TRUE(h.ok()) << h.status();
  (*h)->Handle(JobFailure{"orderSync", 2, "10.0.0.1@-@4242", "disk full"});
  sender.WaitIdle();
  EXPECT_EQ(sender.sent(), 1u);
  std::ifstream in(out);
  std::string mail((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(mail.find("TLS: yes"), std::string::npos) << mail;
  EXPECT_NE(mail.find("AUTH: yes"), std::string::npos) << mail;
  EXPECT_NE(mail.find("RCPT: ops@example.com,dev@example.com,audit@example.com"), std::string::npos)
      << mail;
  EXPECT_NE(mail.find("Subject: ElasticJob error message"), std::string::npos) << mail;
  EXPECT_NE(mail.find("Job 'orderSync'"), std::string::npos) << mail;
  EXPECT_NE(mail.find("Item: 2"), std::string::npos) << mail;
  EXPECT_NE(mail.find("Instance: 10.0.0.1@-@4242"), std::string::npos) << mail;
  EXPECT_NE(mail.find("Cause: disk full"), std::string::npos) << mail;
  EXPECT_EQ(mail.find("Bcc"), std::string::npos) << mail;  // bcc stays out of the headers
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(StartTlsAndImplicitTls, EmailTest,
                         ::testing::Values("starttls", "implicit"));

}  // namespace
}  // namespace elasticjob
