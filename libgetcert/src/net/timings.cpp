#include "net/timings.hpp"

#include <utility>

namespace getcert {

std::string_view to_string(Step step) noexcept {
  switch (step) {
    case Step::resolve:
      return "resolve";
    case Step::connect:
      return "connect";
    case Step::proxy:
      return "proxy";
    case Step::starttls:
      return "starttls";
    case Step::handshake:
      return "handshake";
    case Step::verify:
      return "verify";
    case Step::aia:
      return "aia";
    case Step::ocsp:
      return "ocsp";
    case Step::crl:
      return "crl";
  }
  return "?";
}

namespace detail {
namespace {

thread_local TimingRecorder* current_recorder = nullptr;

}  // namespace

TimingRecorder::TimingRecorder(std::vector<StepTiming>& out, StepCallback callback)
    : out_(out), callback_(std::move(callback)), outer_(current_recorder) {
  current_recorder = this;
}

TimingRecorder::~TimingRecorder() { current_recorder = outer_; }

void TimingRecorder::record(const StepTiming& timing) {
  if (current_recorder != nullptr) current_recorder->add(timing);
}

void TimingRecorder::add(const StepTiming& timing) {
  out_.push_back(timing);
  if (callback_) callback_(timing);
  if (outer_ != nullptr) outer_->add(timing);
}

StepTimer::StepTimer(Step step, std::string detail)
    : step_(step), detail_(std::move(detail)), started_(std::chrono::steady_clock::now()) {}

StepTimer::~StepTimer() {
  try {
    if (!done_) finish(false);
  } catch (...) {  // NOLINT(bugprone-empty-catch): a timing is not worth terminating for
  }
}

void StepTimer::finish(bool ok, const std::string& outcome) {
  if (done_) return;
  done_ = true;
  StepTiming timing;
  timing.step = step_;
  timing.duration = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - started_);
  timing.detail = outcome.empty() ? std::move(detail_) : detail_ + " (" + outcome + ")";
  timing.ok = ok;
  TimingRecorder::record(timing);
}

}  // namespace detail
}  // namespace getcert
