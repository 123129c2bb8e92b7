// One-line diagnostics on stderr ("elasticjob WARN job 'x': ..."), written with one write so
// lines from several threads never interleave. The runtime reports what it cannot return as
// a Status here: a malformed config seen by a listener, a failed coordination step.
#ifndef ELASTICJOB_INFRA_LOG_H_
#define ELASTICJOB_INFRA_LOG_H_

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace elasticjob::infra {

inline void LogLine(std::string_view level, std::string_view message) {
  std::string line = fmt::format("elasticjob {} {}\n", level, message);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace elasticjob::infra

#endif  // ELASTICJOB_INFRA_LOG_H_
