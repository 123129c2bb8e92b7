// The sharding context JSON a script job receives (ShardingContextFromJson). Properties: no
// crash; a context read back from our own JSON is the same context.
#include <cstdint>
#include <string_view>

#include "elasticjob/api/sharding_context.h"
#include "fuzz/fuzz_check.h"

using namespace elasticjob;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto context = ShardingContextFromJson(text);
  if (!context.ok()) return 0;
  auto again = ShardingContextFromJson(ShardingContextToJson(*context));
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(*again == *context);
  return 0;
}
