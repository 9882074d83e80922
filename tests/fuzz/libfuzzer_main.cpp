// libFuzzer entry point of one target; EXPIRY_FUZZ_TARGET names its function (fuzz_targets.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  expiry::fuzz::EXPIRY_FUZZ_TARGET(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
