// ReconcileService: repairs an assignment that names instances no longer alive, ElasticJob's
// ReconcileService. The runtime calls RunOneIteration once a minute; when
// reconcileIntervalMinutes (> 0) have passed since the last check and this instance leads,
// an item owned by an offline instance sets the resharding flag (unless a resharding is
// already pending, or static sharding keeps an existing assignment).
//
// Thread safety: RunOneIteration calls must be serialised (the timer does that).
#ifndef ELASTICJOB_RECONCILE_RECONCILE_SERVICE_H_
#define ELASTICJOB_RECONCILE_RECONCILE_SERVICE_H_

#include "config/config_service.h"
#include "elasticjob/clock.h"
#include "election/leader_service.h"
#include "sharding/sharding_service.h"

namespace elasticjob::reconcile {

class ReconcileService {
 public:
  // REQUIRES: every argument outlives this object.
  ReconcileService(config::ConfigService& config, election::LeaderService& leader,
                   sharding::ShardingService& sharding, Clock& clock)
      : config_(config), leader_(leader), sharding_(sharding), clock_(clock) {}

  // Returns whether it set the resharding flag.
  Result<bool> RunOneIteration();

 private:
  config::ConfigService& config_;
  election::LeaderService& leader_;
  sharding::ShardingService& sharding_;
  Clock& clock_;
  Clock::WallTime last_{};
};

}  // namespace elasticjob::reconcile

#endif  // ELASTICJOB_RECONCILE_RECONCILE_SERVICE_H_
