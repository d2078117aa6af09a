// The check that a backend's emittable table (core/compiler/emittable_table.h)
// answers as its kernel check does on the computation of each instruction
// alone, over every instruction but parameters of every conformance corpus
// module (each computation, reducers and loop bodies included): the cpu,
// cuda and vulkan tests call it with their own table and check.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/compiler/emittable_table.h"
#include "core/hlo_parser.h"
#include "core/single_instruction.h"

namespace kiln::testing {

// The corpus modules, parsed, in name order. This file is
// tests/unit/emittable_agreement.h of the source tree.
inline std::vector<std::unique_ptr<Module>> CorpusModules() {
  const std::filesystem::path corpus =
      std::filesystem::path(__FILE__).parent_path().parent_path() / "conformance" / "corpus";
  std::vector<std::filesystem::path> programs;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(corpus, error)) {
    if (std::filesystem::exists(entry.path() / "module.hlo")) programs.push_back(entry.path());
  }
  std::sort(programs.begin(), programs.end());
  std::vector<std::unique_ptr<Module>> modules;
  for (const std::filesystem::path& program : programs) {
    std::ifstream file(program / "module.hlo");
    std::stringstream text;
    text << file.rdbuf();
    StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text.str());
    EXPECT_TRUE(module.ok()) << program << ": " << module.status().ToString();
    if (module.ok()) modules.push_back(std::move(module).value());
  }
  return modules;
}

struct Agreement {
  int instructions = 0;  // compared
  int refused = 0;       // refused by both
};

// Every instruction of `modules`: table.Check(instruction) is OK exactly
// when kernel_check(the instruction's own computation) is.
inline Agreement ExpectTableAgreesWithKernelCheck(
    const compiler::EmittableTable& table, const std::function<Status(const Computation&)>& kernel_check,
    const std::vector<std::unique_ptr<Module>>& modules) {
  Agreement agreement;
  std::map<std::string, int> disagreements;
  for (const auto& module : modules) {
    for (const auto& computation : module->computations()) {
      for (const auto& instruction : computation->instructions()) {
        // A parameter is never asked (it joins no kernel), and its own
        // computation would number it past the parameters it has.
        if (instruction->opcode == Opcode::kParameter) continue;
        const Status by_table = table.Check(*instruction);
        const Status by_kernel = kernel_check(*SingleInstructionComputation(*instruction, "single"));
        ++agreement.instructions;
        if (!by_kernel.ok() && !by_table.ok()) ++agreement.refused;
        if (by_table.ok() == by_kernel.ok()) continue;
        // One failure per opcode, so a wrong row reads as one line.
        if (disagreements[std::string(OpcodeName(instruction->opcode))]++ == 0)
          ADD_FAILURE() << table.backend() << ": " << module->name() << " " << instruction->ToString()
                        << "\n  table: " << by_table.ToString()
                        << "\n  kernel check: " << by_kernel.ToString();
      }
    }
  }
  return agreement;
}

}  // namespace kiln::testing
