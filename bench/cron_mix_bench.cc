// Cron next-fire time on the benchmark mix (bench/cron_mix.h), the C++ side of the Quartz
// side-by-side (bench/cron_vs_quartz.sh runs this and bench/QuartzCronBench.java in turn).
//   cron_mix_bench print [--count N]         the mix, one "EXPR<TAB>ZONE<TAB>FROM_MS" a line
//                                            (a tab inside an expression sent as U+0001)
//   cron_mix_bench run FILE [--chain K] [--seconds S]
//       for every line of FILE: K fire times chained from FROM_MS (a trigger's walk),
//       repeated over the whole file until S seconds have passed; prints one JSON line with
//       the nanoseconds per NextFireTimeAfter call.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cron_mix.h"

namespace elasticjob::bench {
namespace {

struct Loaded {
  CronExpression cron;
  TimeZone zone;
  CronExpression::TimePoint from;
};

int Print(int count) {
  for (const CronMixCase& c : GenerateCronMix(count)) {
    std::string e = c.expression;
    std::replace(e.begin(), e.end(), '\t', '\x01');
    fmt::print("{}\t{}\t{}\n", e, c.zone_id, c.from_ms);
  }
  return 0;
}

int Run(const std::string& file, int chain, double seconds) {
  std::ifstream in(file);
  if (!in) {
    std::cerr << "cannot read " << file << "\n";
    return 2;
  }
  std::vector<Loaded> cases;
  std::string line;
  while (std::getline(in, line)) {
    size_t a = line.find('\t');
    size_t b = line.find('\t', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string e = line.substr(0, a);
    std::replace(e.begin(), e.end(), '\x01', '\t');
    auto cron = CronExpression::Parse(e);
    auto zone = TimeZone::Parse(line.substr(a + 1, b - a - 1));
    if (!cron.ok() || !zone.ok()) {
      std::cerr << "skipped: " << line << "\n";
      continue;
    }
    int64_t from = std::stoll(line.substr(b + 1));
    cases.push_back({*cron, *zone, CronExpression::TimePoint{} + std::chrono::milliseconds(from)});
  }
  using Clock = std::chrono::steady_clock;
  int64_t calls = 0;
  int64_t fired = 0;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  do {
    for (const Loaded& c : cases) {
      auto t = c.from;
      for (int k = 0; k < chain; ++k) {
        auto next = c.cron.NextFireTimeAfter(t, c.zone);
        ++calls;
        if (!next) break;
        ++fired;
        t = *next;
      }
    }
  } while (Clock::now() < end);
  double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  fmt::print(
      "{{\"impl\":\"elasticjob-cpp\",\"cases\":{},\"calls\":{},\"fired\":{},"
      "\"ns_per_call\":{:.1f}}}\n",
      cases.size(), calls, fired, ns / static_cast<double>(calls));
  return 0;
}

}  // namespace
}  // namespace elasticjob::bench

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto flag = [&](const std::string& name, double def) {
    for (size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == name) return std::stod(args[i + 1]);
    return def;
  };
  if (!args.empty() && args[0] == "print") {
    return elasticjob::bench::Print(static_cast<int>(flag("--count", 2000)));
  }
  if (args.size() >= 2 && args[0] == "run") {
    return elasticjob::bench::Run(args[1], static_cast<int>(flag("--chain", 6)),
                                  flag("--seconds", 2));
  }
  std::cerr << "usage: cron_mix_bench print [--count N] | run FILE [--chain K] [--seconds S]\n";
  return 2;
}
