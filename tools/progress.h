// Progress of `kiln run` on stderr: which phase (parsing, compiling,
// running) it is in and for how long, so that a long compile is not mistaken
// for a hang.
#pragma once

#include <chrono>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>

namespace kiln::tool {

class Progress {
 public:
  enum class Mode {
    kOff,
    // A terminal: a phase still running after a second gets a line that
    // counts the seconds, ending "done in S s".
    kLongPhases,
    // --progress: two plain lines per phase, when it starts and when it ends.
    kEveryPhase,
  };

  // kEveryPhase when `requested`, else kLongPhases when stderr is a
  // terminal, else kOff.
  static Mode ModeFor(bool requested);

  Progress(Mode mode, std::ostream& out) : mode_(mode), out_(out) {}

  // Runs `phase()` as the phase `what` ("compiling on cpu") and returns what
  // it returns.
  template <typename Phase>
  std::invoke_result_t<Phase> Run(const std::string& what, Phase&& phase) {
    Reporter reporter(*this, what);
    return std::forward<Phase>(phase)();
  }

 private:
  // Reports one phase from construction to destruction; in kLongPhases mode
  // with a thread that wakes once a second.
  class Reporter {
   public:
    Reporter(Progress& progress, const std::string& what);
    ~Reporter();
    Reporter(const Reporter&) = delete;
    Reporter& operator=(const Reporter&) = delete;

   private:
    struct State;
    Progress& progress_;
    std::string what_;
    std::chrono::steady_clock::time_point start_;
    std::unique_ptr<State> state_;  // kLongPhases only
  };

  Mode mode_;
  std::ostream& out_;
};

}  // namespace kiln::tool
