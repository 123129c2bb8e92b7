#include "executor/script/script_job.h"

#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace elasticjob::executor {

Result<std::vector<std::string>> ParseCommandLine(std::string_view line) {
  std::vector<std::string> words;
  std::string current;
  bool in_word = false;
  char quote = 0;
  for (char c : line) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        current += c;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(current));
      current.clear();
      in_word = false;
    } else {
      current += c;
      in_word = true;
    }
  }
  if (quote != 0) {
    return InvalidArgument(fmt::format("script.command.line: unbalanced quote in '{}'", line));
  }
  if (in_word) words.push_back(std::move(current));
  if (words.empty()) return InvalidArgument("script.command.line: must not be empty");
  return words;
}

void ScriptJob::Execute(const ShardingContext& context) {
  auto words = ParseCommandLine(command_line_);
  if (!words.ok()) throw std::runtime_error(words.status().message());
  words->push_back(ShardingContextToJson(context));
  std::vector<char*> argv;
  for (auto& w : *words) argv.push_back(w.data());
  argv.push_back(nullptr);
  // The script starts with a clean signal state: no signal blocked or ignored because the
  // host process (the `elasticjob run` command blocks SIGINT/SIGTERM for sigwait) did.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    throw std::runtime_error(fmt::format("cannot run '{}': {}", (*words)[0], std::strerror(rc)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  if (WIFSIGNALED(status)) {
    throw std::runtime_error(
        fmt::format("'{}' killed by signal {}", command_line_, WTERMSIG(status)));
  }
  throw std::runtime_error(fmt::format("'{}' exited with {}", command_line_, WEXITSTATUS(status)));
}

}  // namespace elasticjob::executor
