// Differential test: random op graphs of every family and element type run
// on every backend of this build and are compared with the interpreter. On a
// mismatch the failure names the seed and prints the module's HLO text and
// its arguments, so the case can be replayed with the kiln command.
// With only the interpreter present, each graph is instead checked through
// the HLO text: printed, parsed, printed identically, and run again to the
// same bits.
#include <cstdio>
#include <map>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/backend.h"
#include "core/hlo_parser.h"
#include "core/hlo_printer.h"
#include "tests/differential/graph_generator.h"
#include "tests/differential/leaf_compare.h"
#include "tests/unit/test_util.h"

namespace kiln::differential {

// Names the family in test output ("GetParam() = reduce").
void PrintTo(OpFamily family, std::ostream* out) { *out << OpFamilyName(family); }

namespace {

// 14 families x 22 seeds = 308 graphs.
constexpr uint64_t kSeedsPerFamily = 22;

std::string Describe(OpFamily family, uint64_t seed, const GeneratedGraph& graph) {
  std::ostringstream out;
  out << "family " << OpFamilyName(family) << ", seed " << seed << ", element type "
      << ElementTypeName(graph.element_type) << "\n--- module\n"
      << PrintModule(*graph.module) << "--- arguments\n";
  for (size_t i = 0; i < graph.arguments.size(); ++i)
    out << "p" << i << " = " << graph.arguments[i].ToString() << "\n";
  return out.str();
}

// Names of the backends to compare with the interpreter.
std::vector<std::string> OtherBackends() {
  std::vector<std::string> names;
  for (const std::string& name : BackendNames()) {
    if (name != "interpreter") names.push_back(name);
  }
  return names;
}

struct BackendTally {
  int compared = 0;
  std::map<std::string, int> unsupported;  // reason -> graphs
};

class DifferentialTest : public ::testing::TestWithParam<OpFamily> {};

TEST_P(DifferentialTest, BackendsAgreeWithInterpreter) {
  const OpFamily family = GetParam();
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> interpreter, CreateBackend("interpreter"));
  std::map<std::string, std::unique_ptr<Backend>> others;
  std::map<std::string, BackendTally> tallies;
  const std::vector<std::string> other_names = OtherBackends();
  for (const std::string& name : other_names) {
    StatusOr<std::unique_ptr<Backend>> backend = CreateBackend(name);
    if (!backend.ok()) {
      // A backend that cannot run on this machine (cuda without the NVIDIA driver) is
      // skipped; any other failure to create it is one.
      if (backend.status().code() == StatusCode::kUnavailable) {
        std::printf("[differential] skipping backend %s: %s\n", name.c_str(),
                    backend.status().message().c_str());
      } else {
        ADD_FAILURE() << "creating backend " << name << " failed: " << backend.status().ToString();
      }
      continue;
    }
    others[name] = std::move(backend).value();
  }
  // Backends other than the interpreter, none of which could run, would leave
  // nothing compared: that is a failure, not a pass.
  ASSERT_TRUE(other_names.empty() || !others.empty())
      << "every backend other than the interpreter was skipped or failed to start";

  for (uint64_t seed = 1; seed <= kSeedsPerFamily; ++seed) {
    KILN_ASSERT_OK_AND_ASSIGN(GeneratedGraph graph, GenerateGraph(family, seed));
    const std::string description = Describe(family, seed, graph);
    SCOPED_TRACE("family " + std::string(OpFamilyName(family)) + ", seed " + std::to_string(seed));

    StatusOr<std::vector<Literal>> expected =
        testing::ExecuteLeaves(*interpreter, *graph.module, graph.arguments);
    ASSERT_TRUE(expected.ok()) << "interpreter failed: " << expected.status().ToString() << "\n"
                               << description;
    ASSERT_EQ(expected->size(), graph.checks.size()) << description;

    // The HLO text round trip: print, parse, print the same, run to the same bits.
    const std::string text = PrintModule(*graph.module);
    StatusOr<std::unique_ptr<Module>> parsed = ParseHloModule(text);
    ASSERT_TRUE(parsed.ok()) << "printed module does not parse: " << parsed.status().ToString() << "\n"
                             << description;
    EXPECT_EQ(PrintModule(**parsed), text) << "printing the parsed module differs\n" << description;
    StatusOr<std::vector<Literal>> reparsed_result =
        testing::ExecuteLeaves(*interpreter, **parsed, graph.arguments);
    ASSERT_TRUE(reparsed_result.ok()) << reparsed_result.status().ToString() << "\n" << description;
    for (size_t leaf = 0; leaf < expected->size(); ++leaf) {
      EXPECT_EQ((*reparsed_result)[leaf], (*expected)[leaf])
          << "leaf " << leaf << " differs after the HLO text round trip\n"
          << description;
    }

    for (auto& [name, backend] : others) {
      BackendTally& tally = tallies[name];
      const std::vector<std::string> unsupported = backend->UnsupportedOps(*graph.module);
      if (!unsupported.empty() || !backend->SupportsElementType(graph.element_type)) {
        // A backend may lack an op, saying so by name; counted and printed below.
        const std::string reason = unsupported.empty()
                                       ? "element type " + std::string(ElementTypeName(graph.element_type))
                                       : "op " + unsupported.front();
        ++tally.unsupported[reason];
        continue;
      }
      StatusOr<std::vector<Literal>> actual =
          testing::ExecuteLeaves(*backend, *graph.module, graph.arguments);
      if (!actual.ok()) {
        ADD_FAILURE() << "backend " << name << " failed: " << actual.status().ToString() << "\n"
                      << description;
        continue;
      }
      ++tally.compared;
      if (actual->size() != expected->size()) {
        ADD_FAILURE() << "backend " << name << " returned " << actual->size() << " leaves, expected "
                      << expected->size() << "\n"
                      << description;
        continue;
      }
      for (size_t leaf = 0; leaf < expected->size(); ++leaf) {
        const std::optional<std::string> mismatch =
            LeafMismatch((*expected)[leaf], (*actual)[leaf], graph.checks[leaf]);
        if (mismatch) {
          ADD_FAILURE() << "backend " << name << " differs from the interpreter at result leaf " << leaf
                        << ": " << *mismatch << "\n  interpreter: " << (*expected)[leaf].ToString() << "\n  "
                        << name << ": " << (*actual)[leaf].ToString() << "\n"
                        << description;
        }
      }
    }
  }

  const std::string family_name(OpFamilyName(family));
  if (others.empty()) {
    std::printf(
        "[differential] %s: %llu graphs; no backend other than the interpreter in this build, "
        "so each graph was checked through the HLO text round trip only\n",
        family_name.c_str(), static_cast<unsigned long long>(kSeedsPerFamily));
  }
  for (const auto& [name, tally] : tallies) {
    std::printf("[differential] %s on %s: %d of %llu graphs compared with the interpreter\n",
                family_name.c_str(), name.c_str(), tally.compared,
                static_cast<unsigned long long>(kSeedsPerFamily));
    for (const auto& [reason, count] : tally.unsupported) {
      std::printf("[differential]   %d not run: unsupported %s\n", count, reason.c_str());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Families, DifferentialTest, ::testing::ValuesIn(AllOpFamilies()),
                         [](const ::testing::TestParamInfo<OpFamily>& info) {
                           return std::string(OpFamilyName(info.param));
                         });

}  // namespace
}  // namespace kiln::differential
