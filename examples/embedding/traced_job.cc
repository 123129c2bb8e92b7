// The tracing component (elasticjob::tracing): a job's runs written to an SQLite database by
// the event tracer, then read back through TraceReader.
//
//   ./example_traced_job DATABASE_FILE
//
// Runs a one-off job of two items on this process's own registry (memory://), flushes the
// tracer and prints the executions it finds: "2 executions traced" on success (exit 0).
#include <elasticjob/bootstrap/one_off_job_bootstrap.h>
#include <elasticjob/reg/registry_center.h>
#include <elasticjob/tracing/trace_reader.h>
#include <elasticjob/tracing/tracer.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>

namespace {

class CountJob : public elasticjob::SimpleJob {
 public:
  void Execute(const elasticjob::ShardingContext& context) override {
    context.log().Log(elasticjob::LogLevel::kInfo,
                      "counted item " + std::to_string(context.sharding_item));
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: example_traced_job DATABASE_FILE\n";
    return 2;
  }
  const std::string url = std::string("sqlite://") + argv[1];
  auto tracer = elasticjob::Tracer::Open({.url = url});
  auto registry = elasticjob::NewRegistryCenter("memory://traced");
  if (!tracer.ok() || !registry.ok() || !(*registry)->Init().ok()) {
    std::cerr << (tracer.ok() ? "cannot open the registry" : tracer.status().ToString()) << "\n";
    return 1;
  }
  auto config = elasticjob::JobConfiguration::Builder("traced", 2)
                    .JobErrorHandlerType("THROW")  // Execute() waits for the run
                    .Build();
  if (!config.ok()) return 1;
  elasticjob::BootstrapOptions options;
  options.tracer = *tracer;
  elasticjob::OneOffJobBootstrap job(**registry, std::make_shared<CountJob>(), *config, options);
  if (auto s = job.Execute(); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  job.Shutdown();  // waits for the runs
  if (auto s = (*tracer)->Flush(std::chrono::seconds(10)); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  auto reader = elasticjob::TraceReader::Open(url);
  if (!reader.ok()) {
    std::cerr << reader.status() << "\n";
    return 1;
  }
  elasticjob::ExecutionQuery query;
  query.job_name = "traced";
  auto rows = (*reader)->Executions(query);
  if (!rows.ok()) {
    std::cerr << rows.status() << "\n";
    return 1;
  }
  std::cout << rows->size() << " executions traced" << std::endl;
  return rows->size() == 2 ? 0 : 1;
}
