// SnapshotService: one job's registry subtree as text, as ElasticJob's SnapshotService dumps
// it for `dump@<jobName>` on the dump port (docs/dump.md): one line per node below
// `/{jobName}`, depth first, children in the registry's order (names descending), `path |
// value`; where this instance's watch-fed cache disagrees with the server, `path | value |
// cachedPath | cachedValue` (the cached pair empty when the cache lacks the node). IPv4
// addresses are masked as ElasticJob's SensitiveInfoUtils masks them: `ip1`, `ip2`, ... in
// order of first appearance.
//
// Thread safety: stateless functions; DumpJob calls the registry from the calling thread.
#ifndef ELASTICJOB_SNAPSHOT_SNAPSHOT_SERVICE_H_
#define ELASTICJOB_SNAPSHOT_SNAPSHOT_SERVICE_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elasticjob/reg/registry_center.h"
#include "elasticjob/status.h"

namespace elasticjob::snapshot {

inline constexpr std::string_view kDumpCommand = "dump@";

// The job name of a request line, as ElasticJob reads it: the line starts with `dump@` and
// splitting it at '@' (trailing empty parts dropped, as Java's String.split drops them)
// gives two parts. nullopt for any other line.
std::optional<std::string> ParseDumpCommand(std::string_view line);

// ElasticJob's SensitiveInfoUtils.filterSensitiveIps: every IPv4 address (IpUtils.IP_REGEX)
// becomes `ip<N>`, the same address the same N across all `lines`, numbered from 1 in order
// of first appearance; replaced by plain text substitution within a line, as Java's
// String.replace does (so an address that is a prefix of another one on the same line,
// met first, also masks the start of the other).
std::vector<std::string> FilterSensitiveIps(const std::vector<std::string>& lines);

// The dump of `job_name` (see the top of this file), each line ending in '\n'; a job with
// no nodes gives "\n" as ElasticJob's does. Values and children are read from the server; a
// node deleted meanwhile reads as an empty value without children. Fails with the registry's
// error (CONNECTION_LOSS, ...) otherwise.
Result<std::string> DumpJob(RegistryCenter& registry, std::string_view job_name);

// Asks the dump port at `host`:`port` for `job_name` (ElasticJob's SnapshotService.dumpJob):
// sends `dump@<jobName>`, returns everything sent back until the port closes the connection
// ("" when it serves no such job). Bounded: UNAVAILABLE naming the address and the reason
// when it cannot resolve or connect, TIMEOUT when the whole exchange has not ended within
// `timeout`.
Result<std::string> RequestDump(const std::string& host, int port, std::string_view job_name,
                                std::chrono::milliseconds timeout);

}  // namespace elasticjob::snapshot

#endif  // ELASTICJOB_SNAPSHOT_SNAPSHOT_SERVICE_H_
