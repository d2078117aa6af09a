#include "tools/progress.h"

#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

namespace kiln::tool {
namespace {

using Clock = std::chrono::steady_clock;

// How long a phase runs before a terminal shows it, and how often the shown
// line is updated.
constexpr std::chrono::seconds kShowAfter{1};
constexpr std::chrono::seconds kUpdateEvery{1};

// "0.4 ms", "12.3 ms", "2.5 s".
std::string Duration(Clock::duration elapsed) {
  const double seconds = std::chrono::duration<double>(elapsed).count();
  char text[32];
  if (seconds < 1) {
    std::snprintf(text, sizeof text, "%.1f ms", seconds * 1e3);
  } else {
    std::snprintf(text, sizeof text, "%.1f s", seconds);
  }
  return text;
}

}  // namespace

struct Progress::Reporter::State {
  std::mutex mutex;
  std::condition_variable wake;
  bool done = false;
  std::thread thread;
};

Progress::Mode Progress::ModeFor(bool requested) {
  if (requested) return Mode::kEveryPhase;
  return isatty(STDERR_FILENO) ? Mode::kLongPhases : Mode::kOff;
}

Progress::Reporter::Reporter(Progress& progress, const std::string& what)
    : progress_(progress), what_(what), start_(Clock::now()) {
  if (progress_.mode_ == Mode::kEveryPhase) {
    progress_.out_ << "kiln: " << what_ << " ...\n" << std::flush;
  } else if (progress_.mode_ == Mode::kLongPhases) {
    state_ = std::make_unique<State>();
    state_->thread = std::thread([this] {
      std::unique_lock<std::mutex> lock(state_->mutex);
      bool shown = false;
      Clock::time_point next = start_ + kShowAfter;
      while (!state_->wake.wait_until(lock, next, [this] { return state_->done; })) {
        progress_.out_ << "\rkiln: " << what_ << " ... " << Duration(Clock::now() - start_) << std::flush;
        shown = true;
        next += kUpdateEvery;
      }
      if (shown)
        progress_.out_ << "\rkiln: " << what_ << " ... done in " << Duration(Clock::now() - start_) << "\n";
    });
  }
}

Progress::Reporter::~Reporter() {
  if (progress_.mode_ == Mode::kEveryPhase) {
    progress_.out_ << "kiln: " << what_ << " ... done in " << Duration(Clock::now() - start_) << "\n"
                   << std::flush;
  } else if (state_ != nullptr) {
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      state_->done = true;
    }
    state_->wake.notify_one();
    state_->thread.join();
  }
}

}  // namespace kiln::tool
