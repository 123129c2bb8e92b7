#include "reference_oracle.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace elasticjob::testing {

Result<std::vector<std::string>> RunJavaOracle(const std::string& classpath,
                                               const std::string& source_file,
                                               const std::vector<std::string>& lines) {
  char in_path[] = "/tmp/elasticjob-oracle-in-XXXXXX";
  int fd = mkstemp(in_path);
  if (fd < 0) return Internal("mkstemp failed");
  close(fd);
  {
    std::ofstream in(in_path, std::ios::binary);
    for (const auto& l : lines) in << l << '\n';
  }
  std::string cmd = std::string(ELASTICJOB_JAVA) + " -Xss8m -cp '" + classpath + "' '" +
                    source_file + "' < '" + in_path + "'";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) {
    std::remove(in_path);
    return Internal("cannot start: " + cmd);
  }
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int rc = pclose(p);
  std::remove(in_path);
  if (rc != 0) return Internal("reference oracle failed (exit " + std::to_string(rc) + "): " + cmd);
  std::vector<std::string> result;
  std::istringstream ss(out);
  std::string line;
  while (std::getline(ss, line)) result.push_back(line);
  if (result.size() != lines.size()) {
    return Internal("reference oracle answered " + std::to_string(result.size()) + " of " +
                    std::to_string(lines.size()) + " lines");
  }
  return result;
}

}  // namespace elasticjob::testing
