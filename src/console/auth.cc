#include "console/auth.h"

#include <fmt/format.h>
#include <sodium.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "elasticjob/console/console_server.h"

namespace elasticjob::console {

const char* RoleName(Role role) { return role == Role::kAdmin ? "admin" : "guest"; }

Status InitSodium() {
  if (sodium_init() < 0) return Status(StatusCode::kInternal, "libsodium cannot be initialised");
  return Status::Ok();
}

std::string RandomHex(size_t n) {
  std::string bytes(n, '\0');
  randombytes_buf(bytes.data(), n);
  std::string hex(2 * n + 1, '\0');
  sodium_bin2hex(hex.data(), hex.size(), reinterpret_cast<const unsigned char*>(bytes.data()), n);
  hex.resize(2 * n);
  return hex;
}

Result<UserTable> UserTable::Parse(std::string_view text, std::string_view file_name) {
  auto at = [&](const YAML::Node& node, std::string_view what) {
    return InvalidArgument(fmt::format("{}:{}: {}", file_name, node.Mark().line + 1, what));
  };
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return InvalidArgument(fmt::format("{}:{}: {}", file_name, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap() || !root["users"] || !root["users"].IsSequence()) {
    return InvalidArgument(
        fmt::format("{}:1: users: expected a list of users (name, role, passwordHash)", file_name));
  }
  UserTable table;
  for (const YAML::Node& entry : root["users"]) {
    if (!entry.IsMap()) return at(entry, "users: each entry must be a mapping");
    for (const auto& field : entry) {
      const std::string key = field.first.Scalar();
      if (key != "name" && key != "role" && key != "passwordHash") {
        return at(field.first,
                  fmt::format("{}: unknown field (expected name, role, passwordHash)", key));
      }
      if (!field.second.IsScalar()) return at(field.second, key + ": expected a string");
    }
    for (const char* required : {"name", "role", "passwordHash"}) {
      if (!entry[required]) return at(entry, fmt::format("{}: missing", required));
    }
    User user;
    user.name = entry["name"].Scalar();
    if (user.name.empty() || user.name.size() > 64) {
      return at(entry["name"], "name: expected 1 to 64 characters");
    }
    const std::string role = entry["role"].Scalar();
    if (role == "admin") {
      user.role = Role::kAdmin;
    } else if (role == "guest") {
      user.role = Role::kGuest;
    } else {
      return at(entry["role"], fmt::format("role: '{}': expected admin or guest", role));
    }
    user.password_hash = entry["passwordHash"].Scalar();
    if (!user.password_hash.starts_with("$argon2id$")) {
      // The hash is a secret too: never echoed.
      return at(entry["passwordHash"],
                "passwordHash: expected an argon2id hash ($argon2id$..., from `elasticjob "
                "console hash-password`)");
    }
    if (table.users_.count(user.name) != 0) {
      return at(entry["name"], fmt::format("name: '{}' is listed twice", user.name));
    }
    table.users_.emplace(user.name, std::move(user));
  }
  if (table.users_.empty()) return InvalidArgument(fmt::format("{}:1: users: empty", file_name));
  return table;
}

Result<UserTable> UserTable::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) return InvalidArgument(fmt::format("--users {}: cannot be read", path));
  std::stringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

std::optional<User> UserTable::Check(const std::string& name, const std::string& password) const {
  // A fixed hash for unknown users keeps the time of a failed login alike for every name.
  static const std::string kDummy = [] {
    auto hash = HashConsolePassword("no such user");
    return hash.ok() ? *hash : std::string();
  }();
  auto it = users_.find(name);
  const std::string& hash = it != users_.end() ? it->second.password_hash : kDummy;
  const bool ok = !hash.empty() &&
                  crypto_pwhash_str_verify(hash.c_str(), password.data(), password.size()) == 0;
  if (!ok || it == users_.end()) return std::nullopt;
  return it->second;
}

std::string SessionStore::Key(const std::string& token) {
  unsigned char digest[crypto_generichash_BYTES];
  crypto_generichash(digest, sizeof digest, reinterpret_cast<const unsigned char*>(token.data()),
                     token.size(), nullptr, 0);
  return std::string(reinterpret_cast<const char*>(digest), sizeof digest);
}

std::string SessionStore::Create(const User& user) {
  const std::string token = RandomHex(32);
  Session session;
  session.user = user.name;
  session.role = user.role;
  session.csrf = RandomHex(32);
  session.created = session.last_used = clock_.MonotonicNow();
  MutexLock lock(&mu_);
  // Drop expired sessions now and then, so abandoned ones do not pile up.
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    const auto& s = it->second;
    bool expired =
        session.created - s.last_used >= idle_timeout_ || session.created - s.created >= max_age_;
    it = expired ? sessions_.erase(it) : std::next(it);
  }
  sessions_[Key(token)] = std::move(session);
  return token;
}

std::optional<Session> SessionStore::Find(const std::string& token) {
  if (token.empty()) return std::nullopt;
  const auto now = clock_.MonotonicNow();
  const std::string key = Key(token);
  MutexLock lock(&mu_);
  auto it = sessions_.find(key);
  if (it == sessions_.end()) return std::nullopt;
  Session& s = it->second;
  if (now - s.last_used >= idle_timeout_ || now - s.created >= max_age_) {
    sessions_.erase(it);
    return std::nullopt;
  }
  s.last_used = now;
  return s;
}

bool SessionStore::Valid(const std::string& token) {
  if (token.empty()) return false;
  const auto now = clock_.MonotonicNow();
  MutexLock lock(&mu_);
  auto it = sessions_.find(Key(token));
  return it != sessions_.end() && now - it->second.last_used < idle_timeout_ &&
         now - it->second.created < max_age_;
}

void SessionStore::Remove(const std::string& token) {
  const std::string key = Key(token);
  MutexLock lock(&mu_);
  sessions_.erase(key);
}

std::chrono::milliseconds LoginThrottle::RetryAfter(const std::string& user,
                                                    const std::string& ip) {
  const auto now = clock_.MonotonicNow();
  MutexLock lock(&mu_);
  auto it = entries_.find(user + '\n' + ip);
  if (it == entries_.end() || it->second.blocked_until <= now) {
    return std::chrono::milliseconds(0);
  }
  return std::chrono::ceil<std::chrono::milliseconds>(it->second.blocked_until - now);
}

void LoginThrottle::Failed(const std::string& user, const std::string& ip) {
  const auto now = clock_.MonotonicNow();
  MutexLock lock(&mu_);
  if (entries_.size() > 100000) entries_.clear();  // bounded memory against a flood of names
  Entry& e = entries_[user + '\n' + ip];
  ++e.failures;
  if (e.failures >= kFreeFailures) {
    const int doublings = std::min(e.failures - kFreeFailures, 6);
    e.blocked_until =
        now + std::min<std::chrono::seconds>(std::chrono::seconds(1 << doublings), kMaxDelay);
  }
}

void LoginThrottle::Succeeded(const std::string& user, const std::string& ip) {
  MutexLock lock(&mu_);
  entries_.erase(user + '\n' + ip);
}

}  // namespace elasticjob::console

namespace elasticjob {

Result<std::string> HashConsolePassword(const std::string& password) {
  if (Status s = console::InitSodium(); !s.ok()) return s;
  char hash[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str(hash, password.data(), password.size(), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                        crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0) {
    return Status(StatusCode::kInternal, "password hash: out of memory");
  }
  return std::string(hash);
}

}  // namespace elasticjob
