// expiry-api serving HTTPS itself (--tls-listen-cert-file, --tls-listen-key-file): one server
// SSL_CTX, made once before the workers start and then only read by them (SSL_new per
// connection), TLS 1.2 at least.
#pragma once

#include <memory>
#include <string>

struct ssl_ctx_st;

namespace expiry {

using ServerTlsContext = std::shared_ptr<ssl_ctx_st>;

// Loads the certificate chain and its private key (PEM) and checks that they match. Throws
// ConfigError naming the file and OpenSSL's reason when one is unreadable, not PEM, or when
// the key is not the certificate's.
ServerTlsContext make_server_tls_context(const std::string& cert_file, const std::string& key_file);

}  // namespace expiry
