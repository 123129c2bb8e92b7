#include "elasticjob/lifecycle/job_configuration_api.h"

#include <fmt/format.h>

#include <optional>

#include "bootstrap/runnable_check.h"
#include "lifecycle/lifecycle_reads.h"

namespace elasticjob {
namespace {

class JobConfigurationAPIImpl final : public JobConfigurationAPI {
 public:
  explicit JobConfigurationAPIImpl(RegistryCenter& reg) : reg_(reg) {}

  Result<JobConfiguration> GetJobConfiguration(std::string_view job_name) override {
    return lifecycle::ReadConfig(reg_, job_name);
  }

  Status UpdateJobConfiguration(const JobConfiguration& config) override {
    if (Status s = Validate(config); !s.ok()) return s;
    const std::string path = fmt::format("/{}/config", config.job_name);
    auto current = reg_.GetDirectly(path);
    if (!current.ok()) {
      if (current.status().code() == StatusCode::kNotFound) {
        return NotFound(fmt::format("job '{}' not found", config.job_name));
      }
      return current.status();
    }
    // What the instances must know to run it: refused here rather than at their next fire.
    auto type = reg_.GetDirectly("/" + config.job_name);
    std::optional<JobConfiguration> registered;
    if (auto parsed = ConfigFromYaml(*current); parsed.ok()) registered = *std::move(parsed);
    if (Status s = config::WriterCheck(config, type.value_or(""), registered); !s.ok()) return s;
    // A 3.0.4 cluster reads only its own thread-pool key: keep writing the version it wrote.
    const ConfigYamlVersion version =
        current->find("jobExecutorServiceHandlerType:") != std::string::npos
            ? ConfigYamlVersion::kV3_0_4
            : ConfigYamlVersion::kV3_0_5;
    return reg_.Update(path, ConfigToYaml(config, version));
  }

  Status AddJob(const JobConfiguration& config, std::string_view job_type) override {
    if (Status s = Validate(config); !s.ok()) return s;
    if (job_type.empty()) return InvalidArgument("job type: expected a type or class name");
    if (Status s = config::WriterCheck(config, std::string(job_type), std::nullopt); !s.ok()) {
      return s;
    }
    const std::string root = "/" + config.job_name;
    auto exists = lifecycle::Exists(reg_, root + "/config");
    if (!exists.ok()) return exists.status();
    if (*exists) {
      return Status(StatusCode::kAlreadyExists,
                    fmt::format("job '{}' already exists", config.job_name));
    }
    // The type first, then the config in one create: whoever follows the namespace sees a
    // job once its config appears, with its type already there.
    if (Status s = reg_.Persist(root, job_type); !s.ok()) return s;
    Status s =
        reg_.ExecuteInTransaction({TransactionOp::Create(root + "/config", ConfigToYaml(config))});
    if (s.code() == StatusCode::kAlreadyExists) {
      return Status(StatusCode::kAlreadyExists,
                    fmt::format("job '{}' already exists", config.job_name));
    }
    return s;
  }

  Status RemoveJobConfiguration(std::string_view job_name) override {
    if (Status s = lifecycle::CheckName("job", job_name); !s.ok()) return s;
    auto exists = lifecycle::Exists(reg_, "/" + std::string(job_name));
    if (!exists.ok()) return exists.status();
    if (!*exists) return NotFound(fmt::format("job '{}' not found", job_name));
    // The config first: instances that see it gone write nothing more into the job
    // (ListenerManager::JobRemoved) while its instance nodes go with the rest.
    if (Status s = reg_.Remove(fmt::format("/{}/config", job_name)); !s.ok()) return s;
    return reg_.Remove("/" + std::string(job_name));
  }

 private:
  static Status Validate(const JobConfiguration& config) {
    if (Status s = lifecycle::CheckName("jobName", config.job_name); !s.ok()) return s;
    return ValidateJobConfiguration(config);
  }

  RegistryCenter& reg_;
};

}  // namespace

std::unique_ptr<JobConfigurationAPI> NewJobConfigurationAPI(RegistryCenter& registry) {
  return std::make_unique<JobConfigurationAPIImpl>(registry);
}

}  // namespace elasticjob
