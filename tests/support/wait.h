// Polling helper for integration tests: wait (bounded) until a condition holds.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

namespace expiry::test {

// Calls pred() repeatedly, sleeping `poll` between calls, until it returns
// true or `deadline` (measured from the call, on the steady clock) has passed.
// Returns true as soon as pred() is true; returns false only after pred() was
// evaluated once more at (or after) the deadline and was still false.
// pred is called at least once. A non-positive poll is treated as 1 ms.
template <class Pred>
bool wait_until(Pred pred, std::chrono::milliseconds deadline,
                std::chrono::milliseconds poll = std::chrono::milliseconds(10)) {
    using Clock = std::chrono::steady_clock;
    const auto end = Clock::now() + deadline;
    const auto step = std::max(poll, std::chrono::milliseconds(1));
    for (;;) {
        if (pred()) return true;
        const auto now = Clock::now();
        if (now >= end) return false;
        const auto left = std::chrono::duration_cast<Clock::duration>(end - now);
        std::this_thread::sleep_for(std::min<Clock::duration>(step, left));
    }
}

}  // namespace expiry::test
