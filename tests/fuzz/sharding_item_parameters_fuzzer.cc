// shardingItemParameters ("0=Beijing,1=Shanghai"). The first byte picks the item count.
// Properties: no crash; every parsed item is in [0, count).
#include <cstdint>
#include <string_view>

#include "elasticjob/config/job_configuration.h"
#include "fuzz/fuzz_check.h"

using namespace elasticjob;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int count = data[0] == 0xFF ? kMaxShardingTotalCount : data[0] + 1;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto params = ParseShardingItemParameters(text, count);
  if (!params.ok()) return 0;
  for (const auto& [item, value] : *params) FUZZ_CHECK(item >= 0 && item < count);
  return 0;
}
