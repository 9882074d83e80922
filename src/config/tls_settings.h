// How a program talks TLS to Redis: the tls_* settings every program shares, which apply when
// its URL is rediss://. Pure data and checks; io/tls_context turns them into an OpenSSL context.
#pragma once

#include <optional>
#include <string>

namespace expiry {

struct TlsSettings {
  bool enabled = false;       // the URL is rediss://
  std::string ca_cert_file;   // PEM bundle that verifies the server; with ca_cert_dir empty too,
  std::string ca_cert_dir;    //   the system's default CA store is used
  std::string cert_file;      // client certificate (mutual TLS); needs key_file
  std::string key_file;       // its private key (a path: never the key itself in logs)
  std::string server_name;    // SNI and the name verified; empty: the host of the URL
  bool insecure = false;      // no verification of the server at all

  // The name to send and verify for `host` (server_name if set).
  const std::string& name_for(const std::string& host) const { return server_name.empty() ? host : server_name; }
  bool operator==(const TlsSettings& o) const;
  bool operator!=(const TlsSettings& o) const { return !(*this == o); }
};

// What is inconsistent in `tls`, if anything: tls_* set while TLS is off, a certificate without
// its key (or the reverse). Files are not read here.
std::optional<std::string> tls_settings_error(const TlsSettings& tls);

}  // namespace expiry
