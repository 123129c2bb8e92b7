#include "snapshot/dump_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "elasticjob/reg/registry_center.h"
#include "snapshot/snapshot_service.h"
#include "unit/infra/capturing_logger.h"

namespace elasticjob::snapshot {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

// A raw client connection to 127.0.0.1:`port`.
int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  return fd;
}

// Everything received until the server closes the connection, or nullopt if it has not
// closed it within `bound`.
std::optional<std::string> ReadToEof(int fd, std::chrono::milliseconds bound) {
  std::string got;
  const auto deadline = SteadyClock::now() + bound;
  for (;;) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return got;
    got.append(buf, static_cast<size_t>(n));
  }
}

void Send(int fd, std::string_view text) {
  ASSERT_EQ(send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
}

class DumpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = NewRegistryCenter("memory://dump-server-test");
    ASSERT_TRUE(r.ok());
    registry_ = std::move(r).value();
    ASSERT_TRUE(registry_->Init().ok());
    ASSERT_TRUE(registry_->Persist("/dumpJob/servers/192.168.3.4", "ENABLED").ok());
    ASSERT_TRUE(registry_->Persist("/otherJob/config", "x").ok());
  }
  void Start(DumpServer::Limits limits) {
    auto s = DumpServer::Acquire("127.0.0.1", 0, limits);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = *s;
    auto reg = server_->Register("dumpJob", *registry_);
    ASSERT_TRUE(reg.ok()) << reg.status();
    registration_ = std::move(reg).value();
  }
  void TearDown() override {
    registration_.reset();
    server_.reset();
    registry_->Close();
  }
  std::unique_ptr<RegistryCenter> registry_;
  std::shared_ptr<DumpServer> server_;
  std::unique_ptr<DumpServer::Registration> registration_;
};

TEST_F(DumpServerTest, AnswersADumpOfARegisteredJob) {
  Start({5s, 4});
  auto reply = RequestDump("127.0.0.1", server_->port(), "dumpJob", 5s);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply, "/dumpJob/servers | \n/dumpJob/servers/ip1 | ENABLED\n");
  // "\r\n" ends a line too, and the reply is the same.
  int fd = Connect(server_->port());
  Send(fd, "dump@dumpJob\r\n");
  EXPECT_EQ(ReadToEof(fd, 5s), *reply);
  close(fd);
}

TEST_F(DumpServerTest, AnyOtherLineAndAJobNotRegisteredHereGetAnEmptyReply) {
  Start({5s, 4});
  for (std::string_view line : {"hello\n", "dump@\n", "dump@a@b\n", "stat\n", "dump@otherJob\n"}) {
    int fd = Connect(server_->port());
    Send(fd, line);
    EXPECT_EQ(ReadToEof(fd, 5s), "") << line;
    close(fd);
  }
}

TEST_F(DumpServerTest, AClientThatNeverSendsANewlineIsClosedAfterTheTimeout) {
  Start({300ms, 4});
  const auto start = SteadyClock::now();
  int fd = Connect(server_->port());
  Send(fd, "dump@dumpJob");  // and nothing more, the connection left open
  // Meanwhile the port serves others.
  auto reply = RequestDump("127.0.0.1", server_->port(), "dumpJob", 5s);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_FALSE(reply->empty());
  EXPECT_EQ(ReadToEof(fd, 10s), "");  // closed, unanswered
  EXPECT_GE(SteadyClock::now() - start, 300ms);
  close(fd);
}

TEST_F(DumpServerTest, ALineLongerThanTheLimitClosesTheConnection) {
  Start({30s, 4});  // the timeout is not what closes it
  int fd = Connect(server_->port());
  Send(fd, std::string(DumpServer::kMaxLine + 100, 'a'));
  EXPECT_EQ(ReadToEof(fd, 10s), "");
  close(fd);
}

TEST_F(DumpServerTest, ConnectionsBeyondTheLimitAreClosedAtOnce) {
  Start({30s, 2});
  int idle1 = Connect(server_->port());
  int idle2 = Connect(server_->port());
  int extra = Connect(server_->port());
  EXPECT_EQ(ReadToEof(extra, 10s), "");  // closed although the timeout is 30 s
  EXPECT_EQ(server_->rejected(), 1u);
  close(extra);
  // The idle ones are still open (a line still gets its answer).
  Send(idle1, "dump@dumpJob\n");
  auto reply = ReadToEof(idle1, 10s);
  ASSERT_TRUE(reply.has_value());
  EXPECT_NE(*reply, "");
  close(idle1);
  close(idle2);
  // Once they are gone, new connections are served again.
  std::string again;
  for (auto until = SteadyClock::now() + 10s; again.empty() && SteadyClock::now() < until;) {
    auto r = RequestDump("127.0.0.1", server_->port(), "dumpJob", 5s);
    if (r.ok()) again = *r;
  }
  EXPECT_EQ(again, *reply);
}

TEST_F(DumpServerTest, JobsOnOnePortShareOneListenerWhichClosesWithTheLast) {
  // A free port: bound by a throwaway listener, then released.
  int port = 0;
  {
    auto probe = DumpServer::Acquire("127.0.0.1", 0, {});
    ASSERT_TRUE(probe.ok());
    port = (*probe)->port();
  }
  auto first = DumpServer::Acquire("127.0.0.1", port, {});
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = DumpServer::Acquire("127.0.0.1", port, {});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first->get(), second->get());
  auto a = (*first)->Register("dumpJob", *registry_);
  auto b = (*second)->Register("otherJob", *registry_);
  ASSERT_TRUE(a.ok() && b.ok());
  auto again = (*second)->Register("dumpJob", *registry_);
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  first->reset();
  second->reset();
  auto other = RequestDump("127.0.0.1", port, "otherJob", 5s);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(*other, "/otherJob/config | x\n");
  a->reset();
  EXPECT_EQ(*RequestDump("127.0.0.1", port, "dumpJob", 5s), "");  // left the port
  b->reset();                                                     // the last job: the port closes
  auto closed = RequestDump("127.0.0.1", port, "otherJob", 5s);
  EXPECT_EQ(closed.status().code(), StatusCode::kUnavailable) << closed.status();
}

TEST_F(DumpServerTest, LogsOneListeningLineNamingEachJobOnThePort) {
  auto server = DumpServer::Acquire("127.0.0.1", 0, {});
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  ::testing::internal::CaptureStderr();
  auto a = (*server)->Register("dumpJob", *registry_);
  auto b = (*server)->Register("otherJob", *registry_);
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string where = "127.0.0.1:" + std::to_string(port);
  EXPECT_NE(log.find("INFO job 'dumpJob': dump port listening on " + where), std::string::npos)
      << log;
  EXPECT_NE(log.find("INFO job 'otherJob': dump port listening on " + where), std::string::npos)
      << log;
}

TEST_F(DumpServerTest, AJobsLinesGoToItsLoggerWhenItHasOne) {
  auto server = DumpServer::Acquire("127.0.0.1", 0, {});
  ASSERT_TRUE(server.ok()) << server.status();
  auto logger = std::make_shared<test_support::CapturingLogger>();
  ::testing::internal::CaptureStderr();
  auto a = (*server)->Register("dumpJob", *registry_, logger);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  ASSERT_TRUE(a.ok()) << a.status();
  const auto lines = logger->lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].level, LogLevel::kInfo);
  EXPECT_EQ(lines[0].job, "dumpJob");
  EXPECT_NE(lines[0].message.find("dump port listening on 127.0.0.1:"), std::string::npos)
      << lines[0].message;
}

TEST_F(DumpServerTest, RefusesABadAddressNamingIt) {
  auto s = DumpServer::Acquire("localhost", 0, {});
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("'localhost'"), std::string::npos) << s.status();
}

}  // namespace
}  // namespace elasticjob::snapshot
