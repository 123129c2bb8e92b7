#include "reconcile/reconcile_service.h"

namespace elasticjob::reconcile {

Result<bool> ReconcileService::RunOneIteration() {
  auto config = config_.LoadLastGood();
  if (!config.ok()) return config.status();
  const int minutes = config->reconcile_interval_minutes;
  auto now = clock_.WallNow();
  if (minutes <= 0 || now - last_ < std::chrono::minutes(minutes)) return false;
  last_ = now;
  auto leading = leader_.IsLeader();
  if (!leading.ok() || !*leading) return leading;
  auto need = sharding_.IsNeedSharding();
  if (!need.ok() || *need) return need.ok() ? Result<bool>(false) : need;
  auto offline = sharding_.HasShardingInfoInOfflineServers(config->sharding_total_count);
  if (!offline.ok() || !*offline) return offline;
  if (config->static_sharding) {
    auto has = sharding_.HasShardingInfo();
    if (!has.ok()) return has;
    if (*has) return false;
  }
  if (Status s = sharding_.SetReshardingFlag(); !s.ok()) return s;
  return true;
}

}  // namespace elasticjob::reconcile
