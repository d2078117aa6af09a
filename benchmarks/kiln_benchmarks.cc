// Google Benchmark programs over Kiln's C++ core: for every workload module in
// benchmarks/workloads/SIZE/ it registers
//   compile/NAME   Backend::Compile of the parsed module
//   execute/NAME   Executable::Execute with the inputs resident on the device
// (execute/overhead_10op is the per-execute overhead of a 10-op graph on tiny
// inputs). Wall-clock time is reported, since backends run on thread pools.
//
// Environment: KILN_BENCH_BACKEND (default: the build's first backend),
// KILN_BENCH_SIZE = full | quick (default full), KILN_BENCH_THREADS (intra-op
// threads, default 0 = one per core). Google Benchmark's own flags apply, e.g.
// --benchmark_filter=execute/sgemm.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "benchmarks/workload_inputs.h"
#include "core/backend.h"

namespace kiln::bench {
namespace {

std::string EnvironmentOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

struct Settings {
  std::string backend;
  std::string size;
  int threads = 0;
};

// A workload compiled on first use and kept for later runs of its benchmarks,
// so that only the benchmarks a filter selects pay for compiling.
class Workload {
 public:
  Workload(std::string path, const Settings& settings) : path_(std::move(path)), settings_(settings) {}

  // Parses the module and creates the backend; the error, if any, is kept.
  Status Prepare() {
    if (prepared_) return prepare_status_;
    prepared_ = true;
    prepare_status_ = PrepareOnce();
    return prepare_status_;
  }

  StatusOr<std::unique_ptr<Executable>> Compile() {
    CompileOptions options;
    options.num_threads = settings_.threads;
    return backend_->Compile(*module_, options);
  }

  // Compiles once and uploads the inputs once.
  Status PrepareExecution() {
    KILN_RETURN_IF_ERROR(Prepare());
    if (executable_ != nullptr) return OkStatus();
    KILN_ASSIGN_OR_RETURN(executable_, Compile());
    if (backend_->devices().empty()) return FailedPrecondition("backend has no device");
    for (const Literal& input : inputs_) {
      KILN_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBuffer> buffer,
                            backend_->BufferFromLiteral(input, backend_->devices()[0]));
      arguments_.push_back(buffer.get());
      buffers_.push_back(std::move(buffer));
    }
    return OkStatus();
  }

  Status Execute() {
    StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> results = executable_->Execute(arguments_, {});
    return results.status();
  }

 private:
  Status PrepareOnce() {
    KILN_ASSIGN_OR_RETURN(module_, LoadWorkload(path_));
    KILN_ASSIGN_OR_RETURN(inputs_, MakeInputs(*module_));
    KILN_ASSIGN_OR_RETURN(backend_, CreateBackend(settings_.backend));
    return OkStatus();
  }

  std::string path_;
  Settings settings_;
  bool prepared_ = false;
  Status prepare_status_;
  std::unique_ptr<Module> module_;
  std::vector<Literal> inputs_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Executable> executable_;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers_;
  std::vector<DeviceBuffer*> arguments_;
};

void BenchmarkCompile(benchmark::State& state, Workload* workload) {
  if (Status status = workload->Prepare(); !status.ok()) {
    state.SkipWithError(status.ToString().c_str());
    return;
  }
  for (auto _ : state) {
    StatusOr<std::unique_ptr<Executable>> executable = workload->Compile();
    if (!executable.ok()) {
      state.SkipWithError(executable.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(executable->get());
  }
}

void BenchmarkExecute(benchmark::State& state, Workload* workload) {
  if (Status status = workload->PrepareExecution(); !status.ok()) {
    state.SkipWithError(status.ToString().c_str());
    return;
  }
  for (auto _ : state) {
    if (Status status = workload->Execute(); !status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      break;
    }
  }
}

// Registers both benchmarks of every .hlo file in `directory`, by name.
int RegisterWorkloads(const std::filesystem::path& directory, const Settings& settings,
                      std::vector<std::unique_ptr<Workload>>* workloads) {
  std::error_code error;
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    if (entry.path().extension() == ".hlo") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  for (const std::filesystem::path& path : paths) {
    workloads->push_back(std::make_unique<Workload>(path.string(), settings));
    Workload* workload = workloads->back().get();
    const std::string name = path.stem().string();
    benchmark::RegisterBenchmark(("compile/" + name).c_str(), BenchmarkCompile, workload)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("execute/" + name).c_str(), BenchmarkExecute, workload)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
  return static_cast<int>(paths.size());
}

}  // namespace
}  // namespace kiln::bench

int main(int argc, char** argv) {
  using namespace kiln::bench;
  const std::vector<std::string> names = kiln::BackendNames();
  Settings settings;
  settings.backend = EnvironmentOr("KILN_BENCH_BACKEND", names.empty() ? "interpreter" : names.front());
  settings.size = EnvironmentOr("KILN_BENCH_SIZE", "full");
  settings.threads = std::atoi(EnvironmentOr("KILN_BENCH_THREADS", "0").c_str());
  if (settings.size != "full" && settings.size != "quick") {
    std::fprintf(stderr, "kiln_benchmarks: KILN_BENCH_SIZE must be full or quick, not '%s'\n",
                 settings.size.c_str());
    return 2;
  }
  std::vector<std::unique_ptr<Workload>> workloads;
  const std::filesystem::path directory = std::filesystem::path(KILN_BENCH_WORKLOAD_DIR) / settings.size;
  if (RegisterWorkloads(directory, settings, &workloads) == 0) {
    std::fprintf(stderr, "kiln_benchmarks: no workloads in %s\n", directory.string().c_str());
    return 1;
  }
  benchmark::AddCustomContext("kiln_backend", settings.backend);
  benchmark::AddCustomContext("kiln_workload_size", settings.size);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
