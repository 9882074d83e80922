// EventLoop's callback contracts in-process (no Redis needed): the exception barrier of timers,
// deferred calls and signal handlers, and deferred work dropped when its alive token died.
#include <csignal>
#include <memory>
#include <stdexcept>

#include "loop_harness.h"

namespace expiry::test {
namespace {

using std::chrono::milliseconds;

TEST(EventLoopIo, AThrowingTimerCallbackIsLoggedAndTheLoopGoesOn) {
  LoopHarness h;
  LogCapture log;
  int fired = 0;
  Timer throws(h.loop, [&] {
    ++fired;
    throw std::runtime_error("timer boom");
  });
  Timer throws_other(h.loop, [&] {
    ++fired;
    throw 7;
  });
  throws.arm(milliseconds(0));
  throws_other.arm(milliseconds(1));
  h.run_until([&] { return fired == 2; }, "both timers fire");
  EXPECT_TRUE(log.contains("timer callback threw, ignored: timer boom")) << log.text();
  EXPECT_EQ(log.count("timer callback threw, ignored"), 2u) << log.text();
  EXPECT_FALSE(throws.armed());
  throws.arm(milliseconds(0));  // still usable
  h.run_until([&] { return fired == 3; }, "the timer fires again");
}

TEST(EventLoopIo, AThrowingDeferredCallDoesNotStopTheOthers) {
  LoopHarness h;
  LogCapture log;
  std::vector<int> ran;
  h.loop.defer([&] { ran.push_back(1); });
  h.loop.defer([&] {
    ran.push_back(2);
    throw std::runtime_error("deferred boom");
  });
  h.loop.defer([&] { ran.push_back(3); });
  h.run_until([&] { return ran.size() == 3; }, "all three deferred calls run");
  EXPECT_EQ(ran, (std::vector<int>{1, 2, 3}));
  EXPECT_TRUE(log.contains("deferred call threw, ignored: deferred boom")) << log.text();
}

TEST(EventLoopIo, AThrowingSignalHandlerIsLogged) {
  LoopHarness h;
  LogCapture log;
  int signals = 0;
  h.loop.on_signal(SIGUSR2, [&] {
    ++signals;
    throw std::runtime_error("signal boom");
  });
  h.loop.defer([] { std::raise(SIGUSR2); });
  h.run_until([&] { return signals == 1; }, "the handler runs");
  h.loop.defer([] { std::raise(SIGUSR2); });
  h.run_until([&] { return signals == 2; }, "the handler runs again");
  EXPECT_EQ(log.count("signal handler threw, ignored: signal boom"), 2u) << log.text();
}

TEST(EventLoopIo, DeferredWorkRunsOnlyWhileItsTokenLives) {
  LoopHarness h;
  auto alive = std::make_unique<AliveToken>();
  AliveToken kept;
  int dropped_ran = 0;
  int kept_ran = 0;
  h.loop.defer(*alive, [&] { ++dropped_ran; });
  h.loop.defer(kept, [&] { ++kept_ran; });
  alive.reset();
  bool marker = false;
  h.loop.defer([&] { marker = true; });
  h.run_until([&] { return marker; }, "the marker runs");
  EXPECT_EQ(dropped_ran, 0);
  EXPECT_EQ(kept_ran, 1);
}

TEST(EventLoopIo, DeferredFromADeferredCallRunsOnTheNextIteration) {
  LoopHarness h;
  AliveToken alive;
  int outer = 0;
  int inner = 0;
  h.loop.defer(alive, [&] {
    ++outer;
    h.loop.defer(alive, [&] { ++inner; });
    EXPECT_EQ(inner, 0);  // never from inside defer()
  });
  h.run_until([&] { return inner == 1; }, "the inner call runs");
  EXPECT_EQ(outer, 1);
}

}  // namespace
}  // namespace expiry::test
