// Every registry value and node name an instance reads, written by someone else (an
// operator, a Java instance, a corrupt node): the input is split at NUL bytes into the
// values below, written into an in-memory registry, and then the services read them as the
// runtime does. Properties: no crash or hang; an error is a Status, never an exception.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_service.h"
#include "election/leader_service.h"
#include "execution/execution_service.h"
#include "failover/failover_service.h"
#include "fuzz/fuzz_check.h"
#include "instance/instance_service.h"
#include "instance/job_instance.h"
#include "instance/server_service.h"
#include "reg/memory/memory_registry.h"
#include "sharding/sharding_service.h"

using namespace elasticjob;

namespace {

const char* const kSelfIp = "10.0.0.1";

// Where each NUL-separated field of the input goes ("{}" is the previous field's text when
// a field names a node).
enum Field {
  kConfig,         // /job/config
  kServerIp,       // a servers/ child's name
  kServerState,    // its value (ENABLED, DISABLED or anything)
  kInstanceId,     // an instances/ child's name
  kInstanceYaml,   // its value
  kShardingChild,  // a sharding/ child's name ("3", "x", "-1", "99999999999")
  kItemOwner,      // sharding/0/instance and sharding/{child}/instance
  kRunning,        // sharding/0/running
  kLeader,         // leader/election/instance
  kFailoverItem,   // a leader/failover/items child's name
  kFailover,       // sharding/0/failover
  kFailovering,    // sharding/0/failovering
  kFieldCount
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> f(kFieldCount);
  {
    size_t field = 0;
    for (size_t i = 0; i < size && field < kFieldCount; ++i) {
      if (data[i] == 0) {
        ++field;
      } else {
        f[field] += static_cast<char>(data[i]);
      }
    }
  }
  auto registry = reg::NewMemoryRegistry(
      std::make_shared<reg::MemoryServer>(Clock::System(), std::chrono::milliseconds(0)), "ns");
  reg::ComposedRegistry& reg = *registry;
  if (!reg.Init().ok()) return 0;
  // Writes that the registry refuses (a malformed node name) are simply not there.
  auto put = [&](const std::string& node, const std::string& value) {
    (void)reg.Persist("/job/" + node, value);
  };
  put("config", f[kConfig]);
  put("servers/" + f[kServerIp], f[kServerState]);
  put("servers/" + std::string(kSelfIp), "ENABLED");
  put("instances/" + f[kInstanceId], f[kInstanceYaml]);
  put("sharding/" + f[kShardingChild], "");
  put("sharding/" + f[kShardingChild] + "/instance", f[kItemOwner]);
  put("sharding/0/instance", f[kItemOwner]);
  put("sharding/0/running", f[kRunning]);
  put("leader/election/instance", f[kLeader]);
  put("leader/sharding/necessary", "");
  put("leader/failover/items/" + f[kFailoverItem], "");
  put("sharding/0/failover", f[kFailover]);
  put("sharding/0/failovering", f[kFailovering]);

  auto parsed = instance::JobInstance::FromYaml(f[kInstanceYaml]);
  (void)parsed;

  storage::JobNodeStorage storage(reg, "job");
  config::ConfigService config(storage, Clock::System());
  server::ServerService servers(storage, kSelfIp);
  instance::InstanceService instances(storage, servers, instance::JobInstance::For(kSelfIp, 1));
  const std::string self = instances.self().instance_id;
  put("instances/" + self, instances.self().ToYaml());
  election::LeaderService leader(storage, self);
  JobShardingStrategyRegistry strategies =
      JobShardingStrategyRegistry::WithBuiltins(Clock::System());
  storage::ChangeNotifier notifier;
  sharding::ShardingService sharding(storage, config, leader, instances, servers, strategies,
                                     notifier);
  execution::ExecutionService execution(storage, self);
  failover::FailoverService failover(storage, self);

  auto loaded = config.LoadLastGood(false);
  const int total = loaded.ok() ? loaded->sharding_total_count : 3;
  FUZZ_CHECK(total > 0 && total <= kMaxShardingTotalCount);
  (void)servers.IsAvailableServer(f[kServerIp]);
  (void)servers.HasAvailableServers();
  (void)instances.GetAvailableJobInstances();
  (void)leader.IsLeader();
  (void)sharding.GetShardingItems(f[kInstanceId], total);
  (void)sharding.HasShardingInfoInOfflineServers(total);
  (void)execution.GetAllRunningItems(total);
  (void)failover.GetCrashedShardingItems(f[kInstanceId]);
  (void)failover.GetFailoveringItems(self);
  (void)failover.GetAllFailoveringItems();
  (void)failover.FailoverIfNecessary([n = 0]() mutable { return n++ < 2; }, [](int) {});
  // As the leader when the leader node names us: the sharding reads every item node.
  (void)sharding.ShardNowIfIdleLeader();
  notifier.Cancel();
  return 0;
}
