#pragma once

// Whether this test binary (and so the tree it was built in, programs included) runs under
// AddressSanitizer. Under it a process's peak RSS holds the shadow memory and the quarantine of
// freed blocks (256 MB by default), so it says nothing about the code: memory bounds are asserted
// by the plain build's run only.

namespace expiry::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitized = true;
#elif defined(__has_feature)
inline constexpr bool kAddressSanitized = __has_feature(address_sanitizer);
#else
inline constexpr bool kAddressSanitized = false;
#endif

}  // namespace expiry::test
