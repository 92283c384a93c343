// Cooperative cancellation of long native calls (Ctrl-C).
//
// The binding gives a long call a Cancel whose probe asks Python whether a signal is
// pending (the probe takes the GIL). Long loops call checkpoint() between work items: the
// calling thread (thread 0 of a parallel region) probes at most every kPollInterval; once
// a probe says stop, every thread skips the work left and the call ends by throwing
// Interrupted, which the binding turns into the pending KeyboardInterrupt. Results are
// discarded: an interrupted call changes nothing the caller sees.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>

#include "parallel.hpp"

namespace tripletsearch {

// Thrown by a call that was asked to stop.
struct Interrupted : std::exception {
  const char* what() const noexcept override { return "interrupted"; }
};

class Cancel {
 public:
  static constexpr std::chrono::milliseconds kPollInterval{50};

  Cancel() = default;  // never stops
  explicit Cancel(std::function<bool()> probe)
      : probe_(std::move(probe)), last_(std::chrono::steady_clock::now()) {}
  Cancel(const Cancel&) = delete;
  Cancel& operator=(const Cancel&) = delete;

  bool stopped() const { return stopped_.load(std::memory_order_relaxed); }

  // Between work items, from any thread: probes on the calling thread when the interval
  // has passed; returns whether the call should stop.
  bool checkpoint() {
    if (probe_ && thread_num() == 0 && !stopped()) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_ >= kPollInterval) {
        last_ = now;
        if (probe_()) stopped_.store(true, std::memory_order_relaxed);
      }
    }
    return stopped();
  }

  // After the work (outside any parallel region): throws Interrupted when stopped.
  void throw_if_stopped() const {
    if (stopped()) throw Interrupted();
  }

 private:
  std::function<bool()> probe_;
  std::chrono::steady_clock::time_point last_{};
  std::atomic<bool> stopped_{false};
};

// A Cancel that never stops, for callers without one.
inline Cancel& no_cancel() {
  thread_local Cancel never;
  return never;
}

}  // namespace tripletsearch
