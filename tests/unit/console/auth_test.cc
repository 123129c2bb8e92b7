// The console's accounts without a server: sessions expiring (idle and absolute) on a
// simulated clock, the failed-login backoff, password hashes, the users file's errors.
#include "console/auth.h"

#include <gtest/gtest.h>

#include "elasticjob/console/console_server.h"
#include "elasticjob/simulated_clock.h"

namespace elasticjob::console {
namespace {

using namespace std::chrono_literals;

class ConsoleAuthTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(InitSodium().ok()); }
  SimulatedClock clock_;
};

TEST_F(ConsoleAuthTest, SessionsExpireWhenIdleAndAfterTheirMaximumAge) {
  SessionStore store(clock_, 30min, 2h);
  User alice{"alice", Role::kAdmin, ""};
  const std::string token = store.Create(alice);
  EXPECT_EQ(token.size(), 64u);
  auto s = store.Find(token);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->user, "alice");
  EXPECT_EQ(s->csrf.size(), 64u);
  EXPECT_NE(s->csrf, token);
  EXPECT_FALSE(store.Find(token + "0").has_value());
  EXPECT_FALSE(store.Find("").has_value());
  // Used every 20 minutes: alive until the absolute limit.
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(20min);
    EXPECT_TRUE(store.Find(token).has_value()) << i;
  }
  clock_.Advance(20min);  // 2 h since login
  EXPECT_FALSE(store.Find(token).has_value());
  // Idle for longer than 30 minutes: gone.
  const std::string idle = store.Create(alice);
  clock_.Advance(31min);
  EXPECT_FALSE(store.Find(idle).has_value());
  // Valid does not count as use: it does not keep a session alive.
  const std::string watched = store.Create(alice);
  clock_.Advance(29min);
  EXPECT_TRUE(store.Valid(watched));
  clock_.Advance(1min);
  EXPECT_FALSE(store.Valid(watched));
  EXPECT_FALSE(store.Valid(""));
  // Logout.
  const std::string out = store.Create(alice);
  store.Remove(out);
  EXPECT_FALSE(store.Find(out).has_value());
}

TEST_F(ConsoleAuthTest, FailedLoginsBackOffPerUserAndAddress) {
  LoginThrottle throttle(clock_);
  for (int i = 0; i < LoginThrottle::kFreeFailures - 1; ++i) {
    throttle.Failed("alice", "10.0.0.1");
    EXPECT_EQ(throttle.RetryAfter("alice", "10.0.0.1"), 0ms);
  }
  throttle.Failed("alice", "10.0.0.1");
  EXPECT_EQ(throttle.RetryAfter("alice", "10.0.0.1"), 1000ms);
  EXPECT_EQ(throttle.RetryAfter("alice", "10.0.0.2"), 0ms);
  EXPECT_EQ(throttle.RetryAfter("bob", "10.0.0.1"), 0ms);
  clock_.Advance(1s);
  EXPECT_EQ(throttle.RetryAfter("alice", "10.0.0.1"), 0ms);
  throttle.Failed("alice", "10.0.0.1");
  EXPECT_EQ(throttle.RetryAfter("alice", "10.0.0.1"), 2000ms);
  for (int i = 0; i < 10; ++i) throttle.Failed("alice", "10.0.0.1");
  EXPECT_EQ(throttle.RetryAfter("alice", "10.0.0.1"), LoginThrottle::kMaxDelay);
  throttle.Succeeded("alice", "10.0.0.1");
  EXPECT_EQ(throttle.RetryAfter("alice", "10.0.0.1"), 0ms);
}

TEST_F(ConsoleAuthTest, ChecksArgon2idPasswords) {
  auto hash = HashConsolePassword("s3cret");
  ASSERT_TRUE(hash.ok());
  EXPECT_TRUE(hash->starts_with("$argon2id$"));
  EXPECT_NE(*hash, *HashConsolePassword("s3cret"));  // salted
  auto table = UserTable::Parse(
      "users:\n  - name: alice\n    role: guest\n    passwordHash: '" + *hash + "'\n",
      "users.yaml");
  ASSERT_TRUE(table.ok()) << table.status();
  auto user = table->Check("alice", "s3cret");
  ASSERT_TRUE(user.has_value());
  EXPECT_EQ(user->role, Role::kGuest);
  EXPECT_FALSE(table->Check("alice", "wrong").has_value());
  EXPECT_FALSE(table->Check("nobody", "s3cret").has_value());
}

TEST_F(ConsoleAuthTest, NamesTheLineAndFieldOfABadUsersFile) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"users: 3\n", "f.yaml:1: users: expected a list of users (name, role, passwordHash)"},
      {"users:\n  - name: a\n    role: admin\n", "f.yaml:2: passwordHash: missing"},
      {"users:\n  - name: a\n    role: admin\n    passwordHash: '$argon2id$x'\n    extra: 1\n",
       "f.yaml:5: extra: unknown field (expected name, role, passwordHash)"},
      {"users:\n  - name: a\n    role: admin\n    passwordHash: '$argon2id$x'\n"
       "  - name: a\n    role: guest\n    passwordHash: '$argon2id$y'\n",
       "f.yaml:5: name: 'a' is listed twice"},
      {"users: [\n", "f.yaml:2: end of sequence flow not found"},
      {"users: []\n", "f.yaml:1: users: empty"},
  };
  for (const Case& c : cases) {
    auto table = UserTable::Parse(c.text, "f.yaml");
    ASSERT_FALSE(table.ok()) << c.text;
    EXPECT_EQ(table.status().message(), c.error) << c.text;
  }
}

}  // namespace
}  // namespace elasticjob::console
