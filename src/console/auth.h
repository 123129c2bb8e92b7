// The web console's accounts (docs/console.md): the users file, argon2id password checks
// (libsodium), sessions with their CSRF tokens, and the slowing down of failed logins.
//
// Thread safety: UserTable is immutable after Load. SessionStore and LoginThrottle are safe
// for concurrent use (one mutex each).
#ifndef ELASTICJOB_CONSOLE_AUTH_H_
#define ELASTICJOB_CONSOLE_AUTH_H_

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "elasticjob/clock.h"
#include "elasticjob/mutex.h"
#include "elasticjob/status.h"
#include "elasticjob/thread_annotations.h"

namespace elasticjob::console {

enum class Role { kAdmin, kGuest };
const char* RoleName(Role role);

struct User {
  std::string name;
  Role role = Role::kGuest;
  std::string password_hash;  // "$argon2id$..."
};

// REQUIRES for all: sodium_init() succeeded (InitSodium).
Status InitSodium();

// `n` random bytes from libsodium's randombytes, as lowercase hex.
std::string RandomHex(size_t n);

class UserTable {
 public:
  // Parses a users file:
  //   users:
  //     - name: alice
  //       role: admin            # admin | guest
  //       passwordHash: "$argon2id$v=19$m=65536,t=2,p=1$..."
  // INVALID_ARGUMENT "<file>:<line>: <field>: <problem>" for the first bad entry.
  static Result<UserTable> Parse(std::string_view text, std::string_view file_name);
  static Result<UserTable> Load(const std::string& path);

  // The user when `password` matches the stored hash (argon2id verification: tens of
  // milliseconds by design); nullopt otherwise. An unknown user costs a verification too, so
  // timing does not tell which names exist.
  std::optional<User> Check(const std::string& name, const std::string& password) const;
  size_t size() const { return users_.size(); }

 private:
  std::map<std::string, User> users_;
};

struct Session {
  std::string user;
  Role role = Role::kGuest;
  std::string csrf;
  std::chrono::steady_clock::time_point created;
  std::chrono::steady_clock::time_point last_used;
};

class SessionStore {
 public:
  // REQUIRES: `clock` outlives the store.
  SessionStore(Clock& clock, std::chrono::seconds idle_timeout, std::chrono::seconds max_age)
      : clock_(clock), idle_timeout_(idle_timeout), max_age_(max_age) {}

  // A new session for `user`; returns its token (the cookie's value, 64 hex characters).
  std::string Create(const User& user);
  // The session of `token` when it exists and has not expired (idle or absolute); marks it
  // used. Expired sessions are dropped.
  std::optional<Session> Find(const std::string& token);
  // Whether the session of `token` exists and has not expired, without marking it used (an
  // open event stream must not keep an unattended session alive).
  bool Valid(const std::string& token);
  void Remove(const std::string& token);

 private:
  // Sessions are keyed by a hash of their token: the store holds no usable token.
  static std::string Key(const std::string& token);

  Clock& clock_;
  const std::chrono::seconds idle_timeout_;
  const std::chrono::seconds max_age_;
  Mutex mu_;
  std::map<std::string, Session> sessions_ ELASTICJOB_GUARDED_BY(mu_);
};

// Failed logins per (user, client address): after kFreeFailures failures in a row, further
// attempts are refused (429, without checking the password) until a delay has passed that
// doubles with each failure, from 1 s up to kMaxDelay. A success clears the count. Refusing
// instead of sleeping keeps server threads free.
class LoginThrottle {
 public:
  static constexpr int kFreeFailures = 3;
  static constexpr std::chrono::seconds kMaxDelay{60};

  // REQUIRES: `clock` outlives the throttle.
  explicit LoginThrottle(Clock& clock) : clock_(clock) {}

  // How long the caller must wait before trying again; zero: may try now.
  std::chrono::milliseconds RetryAfter(const std::string& user, const std::string& ip);
  void Failed(const std::string& user, const std::string& ip);
  void Succeeded(const std::string& user, const std::string& ip);

 private:
  struct Entry {
    int failures = 0;
    std::chrono::steady_clock::time_point blocked_until;
  };
  Clock& clock_;
  Mutex mu_;
  std::map<std::string, Entry> entries_ ELASTICJOB_GUARDED_BY(mu_);
};

}  // namespace elasticjob::console

#endif  // ELASTICJOB_CONSOLE_AUTH_H_
