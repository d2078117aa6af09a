// The cuda backend's whole-loop kernels (whole_loop.h) give the
// interpreter's results. No GPU runs here, so each program is lowered by
// the real cuda lowering (LowerForCuda, which dumps the kernels' IR before
// NVPTX codegen, as emitted and as optimised), that IR runs on this host
// (host_kernel_harness.h: a block's 256 GPU threads as fibers on one host
// thread meeting at barriers, warp shuffles played across each warp's 32
// threads), and the program's
// steps run through the real device runner (RunStepSequence) on a host
// executor: copies are memcpy, launches and loop kernels run their IR, a
// loop kernel gets the trip budget the test chooses, and its status is
// reset, read and checked as the cuda executable does. The programs
// avoid libdevice's math functions (the harness does not map them).
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cuda/cuda_program.h"
#include "core/hlo_parser.h"
#include "core/interpreter/eval_context.h"
#include "core/lowering/step_runner.h"
#include "tests/cuda/host_kernel_harness.h"
#include "tests/unit/test_util.h"
#include "tests/unit/whole_loop_programs.h"

namespace kiln {
namespace {

using testing::whole_loop::kConditionalLoop;
using testing::whole_loop::kForiAccumulate;
using testing::whole_loop::kForiX;
using testing::whole_loop::kRowReductionLoop;

// What one launch of a loop kernel reported: {bodies run, finished}.
struct LoopLaunchReport {
  int64_t trips = 0;
  int64_t finished = 0;
  bool operator==(const LoopLaunchReport&) const = default;
};

std::ostream& operator<<(std::ostream& out, const LoopLaunchReport& report) {
  return out << "{" << report.trips << ", " << report.finished << "}";
}

// Device memory of one execution, in host vectors: the steps of the
// program run as the cuda executable runs them, the kernels on the host.
class HostLoopExecutor : public ProgramStepExecutor {
 public:
  HostLoopExecutor(const cuda::CudaProgram& program, const cuda_test::HostKernels& kernels,
                   const std::vector<Literal>& arguments, int64_t trip_budget, int64_t max_launches)
      : program_(program), kernels_(kernels), trip_budget_(trip_budget), max_launches_(max_launches) {
    constexpr size_t kSlotAlignment = 256;
    // Temporaries share the scratch block at their offsets, as on the
    // device, so a slot reused too early shows; poisoned, as device memory
    // is not cleared.
    scratch_.assign(static_cast<size_t>(program.scratch_bytes) + kSlotAlignment, 0xA5);
    uint8_t* scratch =
        scratch_.data() + (kSlotAlignment - reinterpret_cast<uintptr_t>(scratch_.data()) % kSlotAlignment);
    for (const Literal* constant : program.constants)
      constants_.emplace_back(constant->raw().begin(), constant->raw().end());
    for (const Literal& argument : arguments) {
      for (const Literal& leaf : argument.Leaves())
        parameters_.emplace_back(leaf.raw().begin(), leaf.raw().end());
    }
    results_.resize(program.result_leaves.size());
    addresses_.assign(program.slots.size(), nullptr);
    for (size_t i = 0; i < program.slots.size(); ++i) {
      const StepSlot& slot = program.slots[i];
      const auto index = static_cast<size_t>(slot.index);
      switch (slot.kind) {
        case StepSlotKind::kTemporary: addresses_[i] = scratch + slot.offset; break;
        case StepSlotKind::kConstant: addresses_[i] = constants_.at(index).data(); break;
        case StepSlotKind::kParameter: addresses_[i] = parameters_.at(index).data(); break;
        case StepSlotKind::kResult:
          results_.at(index).assign(static_cast<size_t>(slot.bytes), 0xA5);
          addresses_[i] = results_[index].data();
          break;
        case StepSlotKind::kBound: break;
      }
    }
  }

  Status Launch(const ProgramStep& step) override {
    const cuda::PtxKernel& kernel = program_.ptx.kernels.at(static_cast<size_t>(step.kernel));
    if (!kernel.launches.empty() || kernel.takes_rng_key)
      return Unimplemented("the host executor runs no multi-pass or rng kernel (", kernel.name, ")");
    const KernelGrid& grid = program_.kernels.at(static_cast<size_t>(step.kernel)).grid;
    std::vector<uint64_t> arguments;
    for (int slot : step.buffers) arguments.push_back(Address(slot));
    arguments.push_back(static_cast<uint64_t>(grid.iterations));
    for (int64_t block = 0; block < grid.workgroups[0]; ++block) {
      KILN_RETURN_IF_ERROR(kernels_.RunBlock(kernel.name, arguments, block,
                                             static_cast<int>(grid.workgroup_size[0]),
                                             cuda_test::BlockThreads::kTogether));
    }
    return OkStatus();
  }
  Status Copy(int source, int target, int64_t bytes) override {
    if (addresses_[static_cast<size_t>(source)] != addresses_[static_cast<size_t>(target)])
      std::memcpy(addresses_[static_cast<size_t>(target)], addresses_[static_cast<size_t>(source)],
                  static_cast<size_t>(bytes));
    return OkStatus();
  }
  void Bind(int bound, int slot) override {
    addresses_[static_cast<size_t>(bound)] = addresses_[static_cast<size_t>(slot)];
  }
  Status ReadToHost(int slot, void* host, int64_t bytes) override {
    std::memcpy(host, addresses_[static_cast<size_t>(slot)], static_cast<size_t>(bytes));
    return OkStatus();
  }
  Status WriteFromHost(int slot, const void* host, int64_t bytes) override {
    std::memcpy(addresses_[static_cast<size_t>(slot)], host, static_cast<size_t>(bytes));
    return OkStatus();
  }
  bool RunsLoopWhole(const ProgramStep& step) const override { return LoopOf(step) != nullptr; }

  // As CudaExecutable's: the status reset from the program's constant,
  // one block of the loop kernel, the status read back and checked.
  StatusOr<StepLoopTrips> RunLoopTrips(const ProgramStep& step) override {
    const cuda::WholeLoop* loop = LoopOf(step);
    if (loop == nullptr) return Internal("while '", step.name, "' has no loop kernel");
    // A loop that never finishes (a broken kernel) stops the test.
    if (static_cast<int64_t>(reports_.size()) >= max_launches_)
      return Internal("loop kernel ", loop->entry, " launched ", max_launches_, " times without finishing");
    KILN_RETURN_IF_ERROR(Copy(loop->unreported_slot, loop->status_slot, 2 * sizeof(int64_t)));
    std::vector<uint64_t> arguments = {Address(loop->status_slot), static_cast<uint64_t>(trip_budget_)};
    for (int slot : loop->slots) arguments.push_back(Address(slot));
    KILN_RETURN_IF_ERROR(kernels_.RunBlock(loop->entry, arguments, 0, cuda::kThreadsPerBlock,
                                           cuda_test::BlockThreads::kTogether));
    int64_t reported[2] = {0, 0};
    KILN_RETURN_IF_ERROR(ReadToHost(loop->status_slot, reported, sizeof(reported)));
    reports_.push_back({reported[0], reported[1]});
    const bool valid = reported[0] >= 0 && reported[0] <= trip_budget_ &&
                       (reported[1] == 1 || (reported[1] == 0 && reported[0] == trip_budget_));
    if (!valid)
      return Internal("loop kernel ", loop->entry, " reported ", reported[0], " trips, finished ",
                      reported[1], ", for a budget of ", trip_budget_);
    return StepLoopTrips{reported[0], reported[1] == 1};
  }

  // The entry's result leaves, once the steps ran.
  std::vector<std::vector<uint8_t>> Results() {
    std::vector<std::vector<uint8_t>> leaves;
    const std::vector<int>& sources = program_.sequences[0].results;
    for (size_t i = 0; i < sources.size(); ++i) {
      std::vector<uint8_t> leaf(static_cast<size_t>(DenseBytes(program_.result_leaves[i])));
      if (!leaf.empty()) std::memcpy(leaf.data(), addresses_[static_cast<size_t>(sources[i])], leaf.size());
      leaves.push_back(std::move(leaf));
    }
    return leaves;
  }
  const std::vector<LoopLaunchReport>& reports() const { return reports_; }

 private:
  const cuda::WholeLoop* LoopOf(const ProgramStep& step) const {
    for (const cuda::WholeLoop& loop : program_.whole_loops) {
      if (loop.step == &step) return &loop;
    }
    return nullptr;
  }
  uint64_t Address(int slot) const {
    return reinterpret_cast<uint64_t>(addresses_[static_cast<size_t>(slot)]);
  }

  const cuda::CudaProgram& program_;
  const cuda_test::HostKernels& kernels_;
  const int64_t trip_budget_;
  const int64_t max_launches_;
  std::vector<uint8_t> scratch_;
  std::vector<std::vector<uint8_t>> constants_, parameters_, results_;
  std::vector<uint8_t*> addresses_;
  std::vector<LoopLaunchReport> reports_;
};

// Which of the dumped IR files runs: as the emitter wrote it, or after
// the optimiser (what NVPTX codegen turns into PTX).
enum class IrStage { kEmitted, kOptimized };

// A fresh directory for one compile's IR dump, removed with it.
class DumpDirectory {
 public:
  DumpDirectory() {
    static std::atomic<int> next{0};
    path_ = std::filesystem::temp_directory_path() /
            ("kiln_whole_loop_ir_" + std::to_string(getpid()) + "_" + std::to_string(next++));
    std::filesystem::create_directories(path_);
  }
  ~DumpDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

struct HostRun {
  std::vector<std::vector<uint8_t>> results;
  std::vector<LoopLaunchReport> reports;
  std::string ir;  // the IR text that ran
};

// Lowers `text` for cuda, runs it on the host with loop kernels given
// `trip_budget` trips a launch (at most `max_launches` launches), and
// returns its result leaves.
StatusOr<HostRun> RunOnHost(const std::string& text, const std::vector<Literal>& arguments,
                            int64_t trip_budget, int64_t max_launches, IrStage stage) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseHloModule(text));
  KILN_RETURN_IF_ERROR(cuda::RunCudaPasses(*module, /*optimization_level=*/2));
  DumpDirectory dump;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<cuda::CudaProgram> program,
                        cuda::LowerForCuda(std::move(module), cuda::PtxTarget{}, dump.path(), "loop"));
  if (program->whole_loops.empty()) return Internal("no loop of the program runs whole");
  const std::string file =
      dump.path() + (stage == IrStage::kEmitted ? "/loop.ptx.emitted.ll" : "/loop.ptx.optimized.ll");
  HostRun run;
  {
    std::ifstream in(file);
    std::stringstream text_of_file;
    text_of_file << in.rdbuf();
    run.ir = text_of_file.str();
  }
  std::vector<std::string> entries;
  for (const cuda::PtxKernel& kernel : program->ptx.kernels) entries.push_back(kernel.name);
  for (const cuda::WholeLoop& loop : program->whole_loops) entries.push_back(loop.entry);
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<cuda_test::HostKernels> kernels,
                        cuda_test::HostKernels::CompileFile(file, entries));
  HostLoopExecutor executor(*program, *kernels, arguments, trip_budget, max_launches);
  interpreter::HostQueues queues;
  KILN_RETURN_IF_ERROR(RunStepSequence(*program, 0, executor, ExecuteOptions{}, queues, "cuda"));
  run.results = executor.Results();
  run.reports = executor.reports();
  return run;
}

// Runs `text` on the interpreter and on the host as the cuda backend's
// kernels, both IR stages; every result leaf is the same to the bit and
// the loop kernel's launches reported `reports`.
void ExpectInterpretersResults(const std::string& text, const std::vector<Literal>& arguments,
                               int64_t trip_budget, const std::vector<LoopLaunchReport>& reports,
                               bool shuffles = false) {
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(text));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> interpreter, CreateBackend("interpreter"));
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> expected,
                            testing::ExecuteLeaves(*interpreter, *module, arguments));
  for (IrStage stage : {IrStage::kEmitted, IrStage::kOptimized}) {
    SCOPED_TRACE(stage == IrStage::kEmitted ? "emitted IR" : "optimized IR");
    KILN_ASSERT_OK_AND_ASSIGN(HostRun run, RunOnHost(text, arguments, trip_budget,
                                                     static_cast<int64_t>(reports.size()) + 1, stage));
    EXPECT_EQ(run.reports, reports);
    // The warp reduction's shuffles are in the loop kernel, so the harness played them.
    EXPECT_EQ(run.ir.find("llvm.nvvm.shfl.sync.bfly") != std::string::npos, shuffles);
    ASSERT_EQ(run.results.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      const auto want = expected[i].raw();
      ASSERT_EQ(run.results[i].size(), want.size()) << "result " << i;
      EXPECT_EQ(std::memcmp(run.results[i].data(), want.data(), want.size()), 0)
          << "result " << i << " differs from the interpreter's " << expected[i].ToString();
    }
  }
}

std::string ReadWhileTiny() {
  std::ifstream in(KILN_WHILE_TINY_HLO);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Literal Floats(const std::vector<float>& values) { return Literal::FromVector<float>(values); }
Literal S32(int32_t value) { return Literal::Scalar<int32_t>(value); }

TEST(WholeLoopIrTest, WhileTinyMatchesTheInterpreter) {
  const std::string text = ReadWhileTiny();
  ASSERT_NE(text.find("while("), std::string::npos) << "cannot read " << KILN_WHILE_TINY_HLO;
  ExpectInterpretersResults(text, {Floats({1.0f, -2.0f, 0.5f, 100.0f})}, cuda::kWholeLoopTripsPerLaunch,
                            {{1000, 1}});
}

TEST(WholeLoopIrTest, WhileTinyPausedByItsTripBudgetResumes) {
  ExpectInterpretersResults(ReadWhileTiny(), {Floats({1.0f, -2.0f, 0.5f, 100.0f})}, 300,
                            {{300, 0}, {300, 0}, {300, 0}, {100, 1}});
}

TEST(WholeLoopIrTest, ForiLoopCounterAndF32AccumulationMatchTheInterpreter) {
  ExpectInterpretersResults(kForiAccumulate, {S32(77), Floats(kForiX)}, cuda::kWholeLoopTripsPerLaunch,
                            {{77, 1}});
}

TEST(WholeLoopIrTest, ConditionFalseAtTheStartRunsNoTrip) {
  ExpectInterpretersResults(kForiAccumulate, {S32(0), Floats(kForiX)}, cuda::kWholeLoopTripsPerLaunch,
                            {{0, 1}});
  ExpectInterpretersResults(kForiAccumulate, {S32(-5), Floats(kForiX)}, 1, {{0, 1}});
}

TEST(WholeLoopIrTest, TripBudgetSmallerThanTheTripCountPausesAndResumes) {
  ExpectInterpretersResults(kForiAccumulate, {S32(25), Floats(kForiX)}, 7, {{7, 0}, {7, 0}, {7, 0}, {4, 1}});
  // A budget the trips fill exactly: the last launch finds the condition false at once.
  ExpectInterpretersResults(kForiAccumulate, {S32(20), Floats(kForiX)}, 10, {{10, 0}, {10, 0}, {0, 1}});
  ExpectInterpretersResults(kForiAccumulate, {S32(3), Floats(kForiX)}, 1, {{1, 0}, {1, 0}, {1, 0}, {0, 1}});
}

TEST(WholeLoopIrTest, RowReductionsWithWarpShufflesMatchTheInterpreter) {
  Literal m(Shape(ElementType::kF32, {16, 64}));
  int next = 0;
  for (float& value : m.data<float>()) value = static_cast<float>((next++ * 7) % 9) - 4.0f;
  std::vector<Literal> arguments;
  arguments.push_back(std::move(m));
  ExpectInterpretersResults(kRowReductionLoop, arguments, cuda::kWholeLoopTripsPerLaunch, {{20, 1}},
                            /*shuffles=*/true);
  ExpectInterpretersResults(kRowReductionLoop, arguments, 6, {{6, 0}, {6, 0}, {6, 0}, {2, 1}},
                            /*shuffles=*/true);
}

// Conditionals in the body (an s32 index of three branches, indices out of
// range among them, then a pred on a tuple operand), run whole: each
// branch's steps in the loop kernel, chosen by the selector every thread
// read.
TEST(WholeLoopIrTest, ConditionalsInTheBodyMatchTheInterpreter) {
  const std::vector<Literal> arguments = {Floats({1.0f, -2.0f, 0.5f, 3.0f, 0.0f, -0.25f, 8.0f, 1e-3f}),
                                          Floats({0.5f, 0.5f, -1.0f, 2.0f, 1.0f, 0.0f, -3.0f, 0.125f})};
  ExpectInterpretersResults(kConditionalLoop, arguments, cuda::kWholeLoopTripsPerLaunch, {{31, 1}});
  ExpectInterpretersResults(kConditionalLoop, arguments, 7, {{7, 0}, {7, 0}, {7, 0}, {7, 0}, {3, 1}});
}

}  // namespace
}  // namespace kiln
