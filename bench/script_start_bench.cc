// The cost of starting and ending one SCRIPT item's process (`/bin/true`), the item's thread
// blocked meanwhile: `Direct` is how items were started before they had a process group of
// their own (one posix_spawn, then waitpid), `Supervised` is ScriptProcesses::Run (a
// watcher `/bin/sh` spawned to lead the item's group, the command spawned into it, the
// group killed at the end). The argument is the instance's resident heap in MiB: a start
// that forked the instance would grow with it (about 20 ms per start at 256 MiB on the
// benchmark machine), a spawn does not. Run: scripts/bench.sh --benchmark_filter=ScriptStart.
#include <benchmark/benchmark.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstring>
#include <memory>

#include "executor/script/script_processes.h"

extern char** environ;

namespace elasticjob::executor {
namespace {

// A heap of `mib` MiB, every page touched, for the duration of one benchmark.
std::unique_ptr<char[]> Ballast(int64_t mib) {
  auto heap = std::make_unique<char[]>(static_cast<size_t>(mib) << 20);
  std::memset(heap.get(), 1, static_cast<size_t>(mib) << 20);
  return heap;
}

void BM_ScriptStartDirect(benchmark::State& state) {
  auto heap = Ballast(state.range(0));
  char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
  for (auto _ : state) {
    pid_t pid = 0;
    if (posix_spawnp(&pid, argv[0], nullptr, nullptr, argv, environ) != 0) {
      state.SkipWithError("posix_spawnp failed");
      break;
    }
    int status = 0;
    waitpid(pid, &status, 0);
  }
}
BENCHMARK(BM_ScriptStartDirect)->Arg(0)->Arg(256)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_ScriptStartSupervised(benchmark::State& state) {
  auto heap = Ballast(state.range(0));
  ScriptProcesses processes;
  const std::vector<std::string> argv = {"/bin/true"};
  for (auto _ : state) {
    if (!processes.Run(argv).ok()) {
      state.SkipWithError("Run failed");
      break;
    }
  }
}
BENCHMARK(BM_ScriptStartSupervised)->Arg(0)->Arg(256)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace elasticjob::executor
