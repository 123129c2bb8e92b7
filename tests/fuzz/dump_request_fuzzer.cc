// What a dump port reads and writes (snapshot/snapshot_service.h): the request line a client
// sends, and registry values masked in the reply. The input's first line is the request;
// the rest, split at '\n', are dump lines. Properties: no crash or hang; a parsed job name
// is the line's text after `dump@` (trailing '@'s dropped), non-empty, without '@'; masking
// keeps the number of lines and leaves a line without an IPv4 address as it was.
#include <cstdint>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "snapshot/snapshot_service.h"

using namespace elasticjob;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // a request line is at most 1,024 bytes; values stay small here
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const size_t nl = text.find('\n');
  const std::string_view request = text.substr(0, nl);
  if (auto name = snapshot::ParseDumpCommand(request)) {
    FUZZ_CHECK(!name->empty());
    FUZZ_CHECK(name->find('@') == std::string::npos);
    FUZZ_CHECK(request.substr(0, 5 + name->size()) == "dump@" + *name);
    FUZZ_CHECK(request.substr(5 + name->size()).find_first_not_of('@') == std::string::npos);
  }
  std::vector<std::string> lines;
  for (size_t start = nl == std::string_view::npos ? text.size() : nl + 1; start < text.size();) {
    size_t end = std::min(text.find('\n', start), text.size());
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  const std::vector<std::string> masked = snapshot::FilterSensitiveIps(lines);
  FUZZ_CHECK(masked.size() == lines.size());
  static const std::regex kDigitDotDigit(R"(\d\.\d)");
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!std::regex_search(lines[i], kDigitDotDigit)) FUZZ_CHECK(masked[i] == lines[i]);
  }
  return 0;
}
