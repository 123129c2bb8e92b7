// Runs a Java reference program from tests/integration/reference on a batch of input lines
// and returns its output lines. The JDK and jars come from scripts/install-deps.sh.
#ifndef ELASTICJOB_TESTS_INTEGRATION_REFERENCE_REFERENCE_ORACLE_H_
#define ELASTICJOB_TESTS_INTEGRATION_REFERENCE_REFERENCE_ORACLE_H_

#include <string>
#include <vector>

#include "elasticjob/status.h"

namespace elasticjob::testing {

// Runs `java -cp <classpath> <source_file>` with `lines` on stdin (one per line).
Result<std::vector<std::string>> RunJavaOracle(const std::string& classpath,
                                               const std::string& source_file,
                                               const std::vector<std::string>& lines);

}  // namespace elasticjob::testing

#endif  // ELASTICJOB_TESTS_INTEGRATION_REFERENCE_REFERENCE_ORACLE_H_
