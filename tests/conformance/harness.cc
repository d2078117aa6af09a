// Conformance harness: runs programs of the JAX-exported corpus on a backend
// and compares every result leaf with the output JAX computed.
//
//   kiln_conformance run PROGRAM_DIR BACKEND     one program; exit 0 = pass
//   kiln_conformance table CORPUS_DIR BACKEND... every program on every
//                                                backend; prints a pass table
//   kiln_conformance grad PROGRAM_DIR BACKEND    a gradient program's forward
//       function (forward.hlo, same inputs) differentiated by Kiln's autodiff
//       with respect to the parameters of forward_wrt.txt; each gradient is
//       compared with JAX's (grad0.npy, grad1.npy, ...)
//   kiln_conformance table CORPUS_DIR BACKEND --expect-unsupported LIST
//       the same on one backend that does not run everything yet: LIST names
//       (one per line, # comments) the programs it may refuse. Any failure,
//       a refusal of a program not listed, and a listed program that now
//       passes (so the list only shrinks) make it exit 1.
//   kiln_conformance table ... --shard I/N
//       only the programs whose place in name order is I modulo N (0 <= I <
//       N): the sanitizer builds run the corpus as N such tests, each one
//       process, instead of a process per program.
//
// Outcomes: PASS, FAIL (wrong values or an error), UNSUPPORTED (the backend
// names an op it lacks). Only PASS exits 0: an unsupported program is reported
// by name, never skipped silently.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/autodiff/vjp.h"
#include "core/backend.h"
#include "core/hlo_parser.h"
#include "core/literal_compare.h"
#include "core/npy.h"

namespace fs = std::filesystem;

namespace kiln {
namespace {

enum class Outcome { kPass, kFail, kUnsupported };

struct Result {
  Outcome outcome;
  std::string detail;
};

std::vector<fs::path> NumberedFiles(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int i = 0;; ++i) {
    fs::path file = dir / (prefix + std::to_string(i) + ".npy");
    if (!fs::exists(file)) break;
    files.push_back(file);
  }
  return files;
}

StatusOr<std::string> ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open ", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result Fail(const Status& status) { return {Outcome::kFail, status.ToString()}; }

// Runs `module` on the program's inputs (in0.npy, ...) and compares its
// result leaves from `first_compared` on with the files `expected`.
Result RunAndCompare(const Module& module, const fs::path& dir, const std::string& backend_name,
                     const std::vector<fs::path>& expected, size_t first_compared) {
  auto backend = CreateBackend(backend_name);
  if (!backend.ok()) return Fail(backend.status());
  std::vector<std::string> unsupported = (*backend)->UnsupportedOps(module);
  if (!unsupported.empty()) {
    std::string names;
    for (const std::string& name : unsupported) names += (names.empty() ? "" : ", ") + name;
    return {Outcome::kUnsupported, "backend '" + backend_name + "' lacks: " + names};
  }
  auto executable = (*backend)->Compile(module, CompileOptions());
  if (!executable.ok()) return Fail(executable.status().WithContext("compiling"));

  const std::vector<Shape>& parameters = (*executable)->parameter_leaves();
  std::vector<fs::path> inputs = NumberedFiles(dir, "in");
  if (inputs.size() != parameters.size()) {
    return {Outcome::kFail, "corpus has " + std::to_string(inputs.size()) + " inputs for " +
                                std::to_string(parameters.size()) + " parameters"};
  }
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  std::vector<DeviceBuffer*> arguments;
  Device* device = (*backend)->devices()[0];
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto literal = ReadNpyFile(inputs[i].string(), parameters[i].element_type());
    if (!literal.ok()) return Fail(literal.status());
    auto buffer = (*backend)->BufferFromLiteral(*literal, device);
    if (!buffer.ok()) return Fail(buffer.status());
    arguments.push_back(buffer->get());
    buffers.push_back(std::move(*buffer));
  }
  auto results = (*executable)->Execute(arguments, ExecuteOptions());
  if (!results.ok()) return Fail(results.status().WithContext("executing"));

  if (first_compared + expected.size() != results->size()) {
    return {Outcome::kFail, "got " + std::to_string(results->size()) + " results, expected " +
                                std::to_string(first_compared + expected.size())};
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    const size_t leaf = first_compared + i;
    auto actual = (*results)[leaf]->ToLiteral();
    if (!actual.ok()) return Fail(actual.status());
    auto wanted = ReadNpyFile(expected[i].string(), actual->shape().element_type());
    if (!wanted.ok()) return Fail(wanted.status());
    const Tolerance tolerance = LeafTolerance(wanted->shape().element_type(), ModuleTolerance(module));
    const LeafDifference difference = CompareLeaf(*actual, *wanted, tolerance);
    if (!difference.agree()) {
      return {Outcome::kFail, "result " + std::to_string(leaf) + " (" + expected[i].filename().string() +
                                  "): " + difference.first_mismatch};
    }
  }
  return {Outcome::kPass, ""};
}

StatusOr<std::unique_ptr<Module>> ParseFile(const fs::path& path) {
  KILN_ASSIGN_OR_RETURN(std::string text, ReadText(path));
  auto module = ParseHloModule(text);
  if (!module.ok()) return module.status().WithContext("parsing " + path.filename().string());
  return module;
}

Result RunProgram(const fs::path& dir, const std::string& backend_name) {
  auto module = ParseFile(dir / "module.hlo");
  if (!module.ok()) return Fail(module.status());
  return RunAndCompare(**module, dir, backend_name, NumberedFiles(dir, "out"), 0);
}

// The gradient module of forward.hlo returns the loss, then one gradient per
// parameter of forward_wrt.txt: the gradients are its leaves from 1 on.
Result RunGradient(const fs::path& dir, const std::string& backend_name) {
  auto forward = ParseFile(dir / "forward.hlo");
  if (!forward.ok()) return Fail(forward.status());
  auto wrt_text = ReadText(dir / "forward_wrt.txt");
  if (!wrt_text.ok()) return Fail(wrt_text.status());
  std::vector<int64_t> wrt;
  std::istringstream numbers(*wrt_text);
  for (int64_t number = 0; numbers >> number;) wrt.push_back(number);
  const std::vector<fs::path> gradients = NumberedFiles(dir, "grad");
  if (wrt.empty() || wrt.size() != gradients.size()) {
    return {Outcome::kFail, "forward_wrt.txt names " + std::to_string(wrt.size()) + " parameters for " +
                                std::to_string(gradients.size()) + " gradient files"};
  }
  auto gradient = autodiff::BuildVjp(**forward, wrt);
  if (!gradient.ok()) return Fail(gradient.status().WithContext("differentiating forward.hlo"));
  return RunAndCompare(**gradient, dir, backend_name, gradients, 1);
}

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass: return "PASS";
    case Outcome::kFail: return "FAIL";
    case Outcome::kUnsupported: return "UNSUPPORTED";
  }
  return "?";
}

int RunOne(const fs::path& dir, const std::string& backend, bool gradient) {
  Result result = gradient ? RunGradient(dir, backend) : RunProgram(dir, backend);
  std::cout << OutcomeName(result.outcome) << " " << dir.filename().string()
            << (gradient ? " (gradient)" : "") << " on " << backend;
  if (!result.detail.empty()) std::cout << ": " << result.detail;
  std::cout << "\n";
  return result.outcome == Outcome::kPass ? 0 : 1;
}

// The programs named in `list` (one per line; blank lines and # comments
// ignored), or nullopt when it cannot be read.
std::optional<std::set<std::string>> ReadProgramList(const fs::path& list) {
  std::ifstream in(list);
  if (!in) return std::nullopt;
  std::set<std::string> names;
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    line.erase(0, line.find_first_not_of(" \t"));
    if (!line.empty()) names.insert(line);
  }
  return names;
}

// Which programs of the corpus a table runs: shard `index` of `count`.
struct Shard {
  size_t index = 0;
  size_t count = 1;
};

// "I/N" with 0 <= I < N, or nullopt.
std::optional<Shard> ParseShard(const std::string& text) {
  Shard shard;
  char slash = 0;
  std::istringstream in(text);
  if (!(in >> shard.index >> slash >> shard.count) || slash != '/' || !in.eof()) return std::nullopt;
  if (shard.count == 0 || shard.index >= shard.count) return std::nullopt;
  return shard;
}

int RunTable(const fs::path& corpus, const std::vector<std::string>& backends, Shard shard,
             const std::set<std::string>* expect_unsupported) {
  std::vector<fs::path> all;
  for (const auto& entry : fs::directory_iterator(corpus)) {
    if (fs::exists(entry.path() / "module.hlo")) all.push_back(entry.path());
  }
  std::sort(all.begin(), all.end());
  std::vector<fs::path> programs;
  for (size_t i = shard.index; i < all.size(); i += shard.count) programs.push_back(all[i]);
  std::map<std::string, std::map<Outcome, int>> counts;
  bool all_pass = true;
  for (const auto& program : programs) {
    for (const std::string& backend : backends) {
      Result result = RunProgram(program, backend);
      ++counts[backend][result.outcome];
      const std::string name = program.filename().string();
      const bool listed = expect_unsupported != nullptr && expect_unsupported->count(name) > 0;
      if (result.outcome != Outcome::kPass) {
        if (!(listed && result.outcome == Outcome::kUnsupported)) all_pass = false;
        std::cout << OutcomeName(result.outcome) << " " << name << " on " << backend << ": " << result.detail
                  << (listed || expect_unsupported == nullptr ? ""
                                                              : " (not in the list of expected refusals)")
                  << "\n";
      } else if (listed) {
        all_pass = false;
        std::cout << "PASS " << name << " on " << backend
                  << ", which the list of expected refusals names: take it off the list\n";
      }
    }
  }
  std::printf("\n| backend | programs | pass | fail | unsupported |\n|---|---|---|---|---|\n");
  for (const std::string& backend : backends) {
    auto& c = counts[backend];
    std::printf("| %s | %zu | %d | %d | %d |\n", backend.c_str(), programs.size(), c[Outcome::kPass],
                c[Outcome::kFail], c[Outcome::kUnsupported]);
  }
  return all_pass ? 0 : 1;
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) {
  const std::string usage =
      "usage: kiln_conformance run PROGRAM_DIR BACKEND | grad PROGRAM_DIR BACKEND\n"
      "       kiln_conformance table CORPUS_DIR BACKEND... [--shard I/N]\n"
      "       kiln_conformance table CORPUS_DIR BACKEND --expect-unsupported LIST [--shard I/N]\n";
  if (argc >= 4 && std::string(argv[1]) == "run") return kiln::RunOne(argv[2], argv[3], false);
  if (argc >= 4 && std::string(argv[1]) == "grad") return kiln::RunOne(argv[2], argv[3], true);
  if (argc >= 4 && std::string(argv[1]) == "table") {
    std::vector<std::string> backends;
    std::optional<std::set<std::string>> listed;
    kiln::Shard shard;
    for (int i = 3; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--expect-unsupported" && i + 1 < argc) {
        listed = kiln::ReadProgramList(argv[++i]);
        if (!listed) {
          std::cerr << "kiln_conformance: cannot read the list " << argv[i] << "\n";
          return 2;
        }
      } else if (arg == "--shard" && i + 1 < argc) {
        const std::optional<kiln::Shard> parsed = kiln::ParseShard(argv[++i]);
        if (!parsed) {
          std::cerr << "kiln_conformance: --shard wants I/N with 0 <= I < N, not '" << argv[i] << "'\n";
          return 2;
        }
        shard = *parsed;
      } else if (arg.starts_with("--")) {
        std::cerr << "kiln_conformance: unknown option " << arg << "\n" << usage;
        return 2;
      } else {
        backends.push_back(arg);
      }
    }
    if (backends.empty() || (listed && backends.size() != 1)) {
      std::cerr << usage;
      return 2;
    }
    return kiln::RunTable(argv[2], backends, shard, listed ? &*listed : nullptr);
  }
  std::cerr << usage;
  return 2;
}
