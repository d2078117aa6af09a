#include "tools/bench_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <numeric>

#include "core/backend.h"
#include "tools/backend_choice.h"
#include "tools/device_inputs.h"
#include "tools/module_loading.h"
#include "tools/result_output.h"

namespace kiln::tool {
namespace {

using Clock = std::chrono::steady_clock;

// Auto mode stops here even when --min-time is not reached, so that a
// sub-microsecond module cannot fill memory with samples.
constexpr int64_t kMaxAutoIterations = 10'000'000;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string JsonString(const std::string& text) {
  std::string quoted = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (byte < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", byte);
      quoted += escaped;
    } else {
      quoted += c;
    }
  }
  return quoted + "\"";
}

// Fixed notation with three decimals: enough for microseconds and
// milliseconds, and always a valid JSON number.
std::string Number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

// One execution with the results released, as a caller that drops them would.
Status ExecuteOnce(Executable& executable, const DeviceInputs& inputs,
                   std::vector<std::unique_ptr<DeviceBuffer>>* keep_results) {
  KILN_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<DeviceBuffer>> results,
                        executable.Execute(inputs.pointers, ExecuteOptions{}));
  if (keep_results != nullptr) *keep_results = std::move(results);
  return OkStatus();
}

}  // namespace

ExecuteSummary Summarize(const std::vector<double>& execute_seconds) {
  ExecuteSummary summary;
  if (execute_seconds.empty()) return summary;
  std::vector<double> sorted = execute_seconds;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  summary.best_us = sorted.front() * 1e6;
  summary.median_us = median * 1e6;
  summary.mean_us = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n) * 1e6;
  summary.worst_us = sorted.back() * 1e6;
  return summary;
}

void PrintBenchReport(const BenchReport& report, bool json, std::ostream& out) {
  const ExecuteSummary summary = Summarize(report.execute_seconds);
  if (json) {
    out << "{\"module\": " << JsonString(report.module_path)
        << ", \"backend\": " << JsonString(report.backend) << ", \"threads\": " << report.threads
        << ", \"compile_ms\": " << Number(report.compile_ms)
        << ", \"upload_ms\": " << Number(report.upload_ms) << ", \"warmup\": " << report.warmup
        << ", \"iterations\": " << report.execute_seconds.size()
        << ", \"best_us\": " << Number(summary.best_us) << ", \"median_us\": " << Number(summary.median_us)
        << ", \"mean_us\": " << Number(summary.mean_us) << ", \"worst_us\": " << Number(summary.worst_us)
        << "}\n";
    return;
  }
  out << "module:      " << report.module_path << "\n"
      << "backend:     " << report.backend
      << " (threads: " << (report.threads == 0 ? std::string("default") : std::to_string(report.threads))
      << ")\n"
      << "compile:     " << Number(report.compile_ms) << " ms\n"
      << "upload:      " << Number(report.upload_ms) << " ms\n"
      << "executions:  " << report.execute_seconds.size() << " timed after " << report.warmup << " warm-up\n"
      << "per execute: best " << Number(summary.best_us) << " us, median " << Number(summary.median_us)
      << " us, mean " << Number(summary.mean_us) << " us, worst " << Number(summary.worst_us) << " us\n";
}

Status BenchModule(const BenchArguments& arguments, std::ostream& out) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, OpenBackend(arguments.backend));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, LoadModule(arguments.module_path));
  KILN_ASSIGN_OR_RETURN(std::vector<Literal> inputs, LoadInputs(*module, arguments.inputs));

  BenchReport report;
  report.module_path = arguments.module_path;
  report.backend = std::string(backend->name());
  report.threads = arguments.threads;
  report.warmup = arguments.warmup;

  CompileOptions compile_options;
  compile_options.num_threads = arguments.threads;
  compile_options.allow_unsafe_nan_math = arguments.allow_unsafe_nan_math;
  const Clock::time_point compile_start = Clock::now();
  // The module is not read again: the backend may rewrite it instead of a copy.
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable,
                        backend->CompileModule(std::move(module), compile_options));
  report.compile_ms = SecondsSince(compile_start) * 1e3;

  const Clock::time_point upload_start = Clock::now();
  KILN_ASSIGN_OR_RETURN(DeviceInputs device_inputs, UploadInputs(*backend, inputs));
  report.upload_ms = SecondsSince(upload_start) * 1e3;

  for (int64_t i = 0; i < arguments.warmup; ++i)
    KILN_RETURN_IF_ERROR(ExecuteOnce(*executable, device_inputs, nullptr));

  const Clock::time_point timing_start = Clock::now();
  while (true) {
    const Clock::time_point start = Clock::now();
    KILN_RETURN_IF_ERROR(ExecuteOnce(*executable, device_inputs, nullptr));
    report.execute_seconds.push_back(SecondsSince(start));
    const auto done = static_cast<int64_t>(report.execute_seconds.size());
    const bool finished =
        arguments.iterations > 0
            ? done >= arguments.iterations
            : SecondsSince(timing_start) >= arguments.min_time_seconds || done >= kMaxAutoIterations;
    if (finished) break;
  }

  // One more, untimed, execution gives the results to write.
  if (arguments.output_dir) {
    std::vector<std::unique_ptr<DeviceBuffer>> result_buffers;
    KILN_RETURN_IF_ERROR(ExecuteOnce(*executable, device_inputs, &result_buffers));
    KILN_ASSIGN_OR_RETURN(std::vector<Literal> results, DownloadResults(*backend, result_buffers));
    KILN_RETURN_IF_ERROR(WriteResults(results, *arguments.output_dir));
  }
  PrintBenchReport(report, arguments.json, out);
  return OkStatus();
}

}  // namespace kiln::tool
