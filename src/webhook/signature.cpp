// See signature.h.
#include "webhook/signature.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "base/base64.h"
#include "base/percent_encoding.h"

namespace expiry {

std::string hmac_sha256_base64(const std::string& key, const std::string& message) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
       message.size(), mac, &length);
  return base64_encode(std::string_view(reinterpret_cast<const char*>(mac), length));
}

std::string webhook_signature(const std::vector<std::string>& keys, const std::string& id, int64_t timestamp_s,
                              const std::string& body) {
  const std::string message = id + "." + std::to_string(timestamp_s) + "." + body;
  std::string out;
  for (const auto& key : keys) {
    if (!out.empty()) out += ' ';
    out += "v1," + hmac_sha256_base64(key, message);
  }
  return out;
}

std::string webhook_id_of(const StreamEntry& entry) {
  const std::string& occurrence = entry.field("occurrence_ms");
  return percent_encode_visible_ascii(entry.field(entry_field::kId)) + "." +
         percent_encode_visible_ascii(occurrence.empty() ? entry.field(entry_field::kDueMs) : occurrence);
}

}  // namespace expiry
