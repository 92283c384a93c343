// Cooperative cancellation of long native calls (Ctrl-C).
//
// The binding gives a long call a Cancel whose probe asks Python whether a signal is
// pending (the probe takes the GIL). Python runs signal handlers on its main thread only,
// so only the thread that made the call can probe: it does so at its first checkpoint and
// then at most every kPollInterval. Long loops call checkpoint() between work items, from
// any thread; once a probe says stop, every thread skips the work left and the call ends
// by throwing Interrupted, which the binding turns into the pending KeyboardInterrupt.
// Results are discarded: an interrupted call changes nothing the caller sees.
//
// The windows in which a Ctrl-C used to go unheard (tests/core/test_interrupt.py forces
// each one):
//  * the caller's share of a statically scheduled loop done first: it then waited at the
//    loop's barrier, probing nothing, while the other threads worked on (up to the whole
//    call: a gradient whose first half of rows is cheap). Such loops end in a
//    ProbingBarrier, where the caller keeps probing until its team has arrived. (In a
//    dynamically scheduled loop -- the simulators' runs -- the caller takes work until
//    none is left: what it cannot hear is the other threads' last work items.)
//  * work started after the stop: a simulator built each remaining run's searcher
//    before its first checkpoint (simulate_continuous: 1-9 s for 5000 runs on a loaded
//    2-core machine, and in proportion to the runs). Every run checks before it starts,
//    and between its queries (stages);
//  * a signal pending when the call starts: probed only 50 ms later; now at the first
//    checkpoint;
//  * "the caller" was OpenMP thread 0, which every thread of a nested region is: workers
//    probed from threads that cannot run Python's handlers, resetting the poll clock
//    (a data race) and postponing the caller's probes. The caller is now the thread that
//    constructed the Cancel.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

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
  // A call made on this thread, asking `probe` (on this thread only) whether to stop.
  explicit Cancel(std::function<bool()> probe)
      : probe_(std::move(probe)), caller_(std::this_thread::get_id()) {}
  Cancel(const Cancel&) = delete;
  Cancel& operator=(const Cancel&) = delete;

  bool stopped() const { return stopped_.load(std::memory_order_relaxed); }
  // Whether the call can be stopped at all (false: no_cancel()).
  bool probing() const { return static_cast<bool>(probe_); }
  // Whether the calling thread is the one that probes.
  bool probes_here() const { return probe_ && std::this_thread::get_id() == caller_; }

  // Between work items, from any thread: on the caller's thread, probes at the first
  // checkpoint and then when the interval has passed; returns whether the call should stop.
  bool checkpoint() {
    if (!stopped() && probes_here()) {
      const auto now = std::chrono::steady_clock::now();
      if (!probed_ || now - last_ >= kPollInterval) {
        probed_ = true;
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
  std::thread::id caller_{};
  bool probed_ = false;  // the caller's state: no other thread touches these two
  std::chrono::steady_clock::time_point last_{};
  std::atomic<bool> stopped_{false};
};

// A Cancel that never stops, for callers without one.
inline Cancel& no_cancel() {
  thread_local Cancel never;
  return never;
}

// Where the threads of a parallel region meet after a worksharing loop marked nowait,
// before the barrier that follows (the region's end or an explicit one): every thread
// calls arrive() once. The caller of a probing Cancel stays awake to Ctrl-C until its
// whole team has arrived (at the loop's own barrier it would wait deaf while the others
// work): it spins as at an OpenMP barrier (balanced loops end together), then sleeps until
// the last thread arrives, waking every kPollInterval to probe. The others return at once.
class ProbingBarrier {
 public:
  // as long as an OpenMP barrier spins before it sleeps (libgomp: 300,000 pauses)
  static constexpr std::chrono::milliseconds kSpin{5};

  void arrive(Cancel& cancel) {
    if (!cancel.probing()) return;  // nobody to keep awake: the barrier that follows will do
    const int team = team_size();
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == team) {  // the last one
      mutex_.lock();  // the caller is now checking or waiting, not in between
      mutex_.unlock();
      wake_.notify_all();
      return;
    }
    if (!cancel.probes_here()) return;
    const auto spin_end = std::chrono::steady_clock::now() + kSpin;
    for (int i = 1; !all_arrived(team); ++i)
      if (i % 256 == 0 && std::chrono::steady_clock::now() > spin_end) break;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!all_arrived(team)) {
      lock.unlock();
      cancel.checkpoint();
      lock.lock();
      if (!all_arrived(team)) wake_.wait_for(lock, Cancel::kPollInterval);
    }
  }

 private:
  bool all_arrived(int team) const { return arrived_.load(std::memory_order_acquire) >= team; }

  std::atomic<int> arrived_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
};

}  // namespace tripletsearch
