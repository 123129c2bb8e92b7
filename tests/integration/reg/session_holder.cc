// Helper process for the registry tests: holds a ZooKeeper session until killed.
//   session_holder URL ephemeral KEY   creates an ephemeral node, prints "ready", waits
//   session_holder URL latch KEY       takes the leader latch, prints "ready" inside it, waits
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "elasticjob/reg/registry_center.h"

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  auto reg = elasticjob::NewRegistryCenter(argv[1]);
  if (!reg.ok() || !(*reg)->Init().ok()) return 3;
  auto ready_and_wait = [] {
    std::printf("ready\n");
    std::fflush(stdout);
    while (true) pause();
  };
  if (std::strcmp(argv[2], "ephemeral") == 0) {
    if (!(*reg)->PersistEphemeral(argv[3], "holder").ok()) return 4;
    ready_and_wait();
  }
  if (std::strcmp(argv[2], "latch") == 0) {
    elasticjob::Status s = (*reg)->ExecuteInLeader(argv[3], ready_and_wait);
    return s.ok() ? 0 : 5;
  }
  return 2;
}
