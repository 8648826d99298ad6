#pragma once

// Step timings without threading a recorder through every dialing function: fetch() and
// verify_chain() install a TimingRecorder for the duration of the call, and the code that
// performs a step (resolve, connect, a download...) times it with a StepTimer, which reports to
// the recorder of its thread, if any. A fetch runs on one thread (fetch_many gives each its own
// worker), so thread-local is exactly "the fetch in progress here".

#include <chrono>
#include <string>
#include <vector>

#include "getcert/verify.hpp"

namespace getcert::detail {

// Collects the steps that end on this thread while it lives, passes each to `callback` (may be
// empty) and to the recorder it was installed over, so a verification inside a fetch adds its
// downloads to both lists.
class TimingRecorder {
 public:
  TimingRecorder(std::vector<StepTiming>& out, StepCallback callback);
  TimingRecorder(const TimingRecorder&) = delete;
  TimingRecorder& operator=(const TimingRecorder&) = delete;
  TimingRecorder(TimingRecorder&&) = delete;
  TimingRecorder& operator=(TimingRecorder&&) = delete;
  ~TimingRecorder();

  // Hands a finished step to the innermost recorder of this thread; nothing without one.
  static void record(const StepTiming& timing);

 private:
  void add(const StepTiming& timing);

  std::vector<StepTiming>& out_;
  StepCallback callback_;
  TimingRecorder* outer_;
};

// Times one step from construction to finish(); a timer destroyed unfinished (an early return)
// records the step as failed.
class StepTimer {
 public:
  StepTimer(Step step, std::string detail);
  StepTimer(const StepTimer&) = delete;
  StepTimer& operator=(const StepTimer&) = delete;
  StepTimer(StepTimer&&) = delete;
  StepTimer& operator=(StepTimer&&) = delete;
  ~StepTimer();

  // Records the step now; `outcome`, when not empty, is appended to the detail in parentheses.
  void finish(bool ok, const std::string& outcome = {});

 private:
  Step step_;
  std::string detail_;
  std::chrono::steady_clock::time_point started_;
  bool done_ = false;
};

}  // namespace getcert::detail
