// The `/{job}/config` node's YAML (ConfigFromYaml, then validation, as ConfigService and the
// config listener read it). Properties: no crash; a valid configuration written back with
// ConfigToYaml reads back equal (but for monitorPort, an instance setting never written).
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "elasticjob/config/job_configuration.h"
#include "fuzz/fuzz_check.h"

using namespace elasticjob;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = ConfigFromYaml(text);
  if (!config.ok()) return 0;
  if (!ValidateJobConfiguration(*config).ok()) return 0;
  const std::string yaml = ConfigToYaml(*config);
  auto again = ConfigFromYaml(yaml);
  config->monitor_port = JobConfiguration{}.monitor_port;
  if (!again.ok() || !(*again == *config)) {
    std::fprintf(stderr, "written:\n%s\nread back: %s\n", yaml.c_str(),
                 again.ok() ? ConfigToYaml(*again).c_str() : again.status().ToString().c_str());
  }
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(*again == *config);
  return 0;
}
