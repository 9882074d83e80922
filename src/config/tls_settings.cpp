// See tls_settings.h.
#include "config/tls_settings.h"

#include <tuple>

namespace expiry {

bool TlsSettings::operator==(const TlsSettings& o) const {
  return std::tie(enabled, ca_cert_file, ca_cert_dir, cert_file, key_file, server_name, insecure) ==
         std::tie(o.enabled, o.ca_cert_file, o.ca_cert_dir, o.cert_file, o.key_file, o.server_name, o.insecure);
}

std::optional<std::string> tls_settings_error(const TlsSettings& tls) {
  if (!tls.enabled) {
    const char* set = !tls.ca_cert_file.empty() ? "tls_ca_cert_file"
                      : !tls.ca_cert_dir.empty() ? "tls_ca_cert_dir"
                      : !tls.cert_file.empty()   ? "tls_cert_file"
                      : !tls.key_file.empty()    ? "tls_key_file"
                      : !tls.server_name.empty() ? "tls_server_name"
                      : tls.insecure             ? "tls_insecure"
                                                 : nullptr;
    if (set != nullptr) return std::string(set) + " is set but the Redis URL is not rediss:// (TLS is off)";
    return std::nullopt;
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return "tls_cert_file and tls_key_file go together (a client certificate needs its key)";
  }
  return std::nullopt;
}

}  // namespace expiry
