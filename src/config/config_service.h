// ConfigService: the job's configuration in the registry, ElasticJob's ConfigurationService.
//
// SetUp at start-up: the job's type name goes to `/{job}` and its YAML to `/{job}/config`
// when the registry has no config yet or `overwrite` is set; otherwise the registry's
// configuration wins and is returned (one line is logged when it differs from the one
// given, naming the fields). A different type name already registered for the job is
// ElasticJob's "job conflict" error.
//
// A configuration is good when ValidateJobConfiguration accepts it and the instance's
// runnable check (SetRunnableCheck: the type names it knows) does; a bad one is refused as
// a whole, and a running job keeps its last good one (LoadLastGood).
//
// Thread safety: safe for concurrent use.
#ifndef ELASTICJOB_CONFIG_CONFIG_SERVICE_H_
#define ELASTICJOB_CONFIG_CONFIG_SERVICE_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "elasticjob/clock.h"
#include "elasticjob/config/job_configuration.h"
#include "elasticjob/mutex.h"
#include "elasticjob/thread_annotations.h"
#include "infra/log.h"
#include "storage/job_node_storage.h"

namespace elasticjob::config {

class ConfigService {
 public:
  // REQUIRES: `storage` and `clock` outlive this object. `log`: where the job's lines go.
  ConfigService(storage::JobNodeStorage& storage, Clock& clock,
                ConfigYamlVersion version = ConfigYamlVersion::kV3_0_5, infra::JobLogger log = {})
      : storage_(storage), clock_(clock), version_(version), log_(std::move(log)) {}

  // Registers `config` for a job of type `job_type_name` (see above). Returns the effective
  // configuration. Fails with FAILED_PRECONDITION on a job conflict, INVALID_ARGUMENT when
  // `config` or the registry's config is invalid (naming the job), or a registry error.
  // `seen_absent`: the caller saw no `/{job}` node moments ago (ScheduleAll lists the
  // namespace once for all its jobs): `/{job}` and `/{job}/config` are then created in one
  // transaction grouped with other jobs' (JobNodeStorage::ExecuteInTransactionGrouped); if
  // it fails (the job was registered meanwhile, or the write did not go through), the set-up
  // goes on as without the hint, so the registry's configuration still wins. `*created`
  // (when given) says whether that transaction created the job: then nothing but `/{job}`
  // and `/{job}/config` is there, and no other instance had the job before this one.
  Result<JobConfiguration> SetUp(std::string_view job_type_name, const JobConfiguration& config,
                                 bool seen_absent = false, bool* created = nullptr);

  // What a configuration must pass to run here besides ValidateJobConfiguration (the
  // sharding strategy, item limit, error handler and listener types this instance knows):
  // INVALID_ARGUMENT naming the field and the value. Set once before the job's services use
  // this service (SetUp does not apply it: the caller checks the registry's configuration
  // itself); default: none.
  using RunnableCheck = std::function<Status(const JobConfiguration&)>;
  void SetRunnableCheck(RunnableCheck check);
  // ValidateJobConfiguration, then the runnable check.
  Status Check(const JobConfiguration& config);

  // The registered configuration, read from the cache when `from_cache` (falling back to the
  // server while the cache has not seen it yet). Fails naming the job and the problem when
  // the node is missing, malformed or invalid. The same text is parsed only once (a text
  // refused as malformed or invalid too: it is refused again at once).
  Result<JobConfiguration> Load(bool from_cache);
  // How many texts Load has parsed so far.
  uint64_t parses();
  // The configuration Load, LoadLastGood or AdoptWritten parsed and accepted from `yaml`,
  // when that is the text they parsed last; else nullopt. A listener handed the same text
  // again (the cache's replay of the config SetUp wrote) need not parse it again.
  std::optional<JobConfiguration> ParsedBefore(std::string_view yaml);

  // Load for a run or a listener: when the node is malformed or invalid, the last good
  // configuration this service saw is returned instead (the error is logged once per bad
  // value), so a running job keeps its last good configuration. Fails only when none was
  // ever good.
  Result<JobConfiguration> LoadLastGood(bool from_cache = true);
  // LoadLastGood of the text SetUp has just written (it reported `created`: the job was not
  // registered, and this call created its root and config in one transaction), without
  // reading it back: parsed and checked as Load does, and remembered as the last good one.
  // FAILED_PRECONDITION when SetUp wrote nothing (or it was adopted already).
  Result<JobConfiguration> AdoptWritten();

  // ElasticJob's time-skew check: FAILED_PRECONDITION when maxTimeDiffSeconds >= 0 and this
  // machine's clock differs from the registry's by more than that. The first form loads the
  // configuration; the second uses the caller's (a trigger has loaded it already).
  Status CheckMaxTimeDiffSecondsTolerable();
  Status CheckMaxTimeDiffSecondsTolerable(int max_time_diff_seconds);

 private:
  storage::JobNodeStorage& storage_;
  Clock& clock_;
  const ConfigYamlVersion version_;
  const infra::JobLogger log_;
  // The fields of `given` that the registry's `registered` sets otherwise, for SetUp's line.
  std::string DifferingFields(const JobConfiguration& given, const JobConfiguration& registered);
  // Load's second half: `yaml` parsed and checked, or its refusal (each text once).
  Result<JobConfiguration> Parse(std::string yaml);
  // LoadLastGood's second half: `config` remembered as the last good one, or the last good
  // one instead of its refusal.
  Result<JobConfiguration> LastGood(Result<JobConfiguration> config);

  Mutex mu_;
  RunnableCheck check_ ELASTICJOB_GUARDED_BY(mu_);
  std::optional<JobConfiguration> last_good_ ELASTICJOB_GUARDED_BY(mu_);
  std::optional<std::string> written_yaml_ ELASTICJOB_GUARDED_BY(mu_);  // SetUp's, to adopt
  std::string last_bad_ ELASTICJOB_GUARDED_BY(mu_);                     // the error last logged
  // The last YAML text parsed and validated, and its result: every trigger loads the
  // configuration, and the text rarely changes (parsing it was most of a trigger's CPU).
  std::string parsed_yaml_ ELASTICJOB_GUARDED_BY(mu_);
  std::optional<JobConfiguration> parsed_ ELASTICJOB_GUARDED_BY(mu_);
  // The last text refused (INVALID_ARGUMENT), and why.
  std::string refused_yaml_ ELASTICJOB_GUARDED_BY(mu_);
  Status refused_ ELASTICJOB_GUARDED_BY(mu_) = Status::Ok();
  uint64_t parses_ ELASTICJOB_GUARDED_BY(mu_) = 0;
};

}  // namespace elasticjob::config

#endif  // ELASTICJOB_CONFIG_CONFIG_SERVICE_H_
