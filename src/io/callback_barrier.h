// The one exception barrier for callbacks called from C (libevent, hiredis): nothing may
// throw across a C frame, so every trampoline runs user code through call_guarded, which logs
// and swallows what it throws ("<who> threw, ignored: <what>").
#pragma once

#include <exception>
#include <string_view>
#include <utility>

namespace expiry {

// Logs "<who> threw, ignored: <what>" (or "<who> threw, ignored" when `what` is null).
// Never throws.
void report_callback_exception(std::string_view who, const char* what) noexcept;

// Runs fn(); anything it throws is logged with report_callback_exception and swallowed.
template <class Fn>
void call_guarded(std::string_view who, Fn&& fn) noexcept {
  try {
    std::forward<Fn>(fn)();
  } catch (const std::exception& e) {
    report_callback_exception(who, e.what());
  } catch (...) {
    report_callback_exception(who, nullptr);
  }
}

}  // namespace expiry
