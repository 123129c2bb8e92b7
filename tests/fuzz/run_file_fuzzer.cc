// The file `elasticjob run` reads (ParseRunFile), and the registry URL it names. Property: no
// crash; every refusal is one printable line.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cli/run_file.h"
#include "fuzz/fuzz_check.h"
#include "reg/registry_url.h"

using namespace elasticjob;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> warnings;
  auto file = cli::ParseRunFile(text, {}, &warnings);
  if (file.ok()) {
    // The registry URL the file names, as NewRegistryCenter reads it.
    (void)reg::ParseRegistryUrl(file->registry_url);
  }
  if (!file.ok()) {
    const Status status = file.status();  // by value: keep it while its message is read
    FUZZ_CHECK(status.code() == StatusCode::kInvalidArgument);
    if (status.message().find('\n') != std::string::npos) {
      std::fprintf(stderr, "refusal of more than one line:\n%s\n", status.message().c_str());
      FUZZ_CHECK(status.message().find('\n') == std::string::npos);
    }
  }
  return 0;
}
