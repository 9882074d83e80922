// See tls_listener.h.
#include "api/tls_listener.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "base/errors.h"
#include "config/text_file.h"

namespace expiry {

namespace {

// OpenSSL's queued errors, oldest first, joined; the queue is left empty.
std::string openssl_errors() {
  std::string out;
  while (const unsigned long code = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(code, text, sizeof text);
    if (!out.empty()) out += "; ";
    out += text;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

}  // namespace

ServerTlsContext make_server_tls_context(const std::string& cert_file, const std::string& key_file) {
  // Read first, so a missing or unreadable file is named with the system's reason.
  read_text_file(cert_file, "--tls-listen-cert-file");
  read_text_file(key_file, "--tls-listen-key-file");
  ERR_clear_error();
  ServerTlsContext ctx(SSL_CTX_new(TLS_server_method()), &SSL_CTX_free);
  if (!ctx) throw ConfigError("cannot create the TLS context: " + openssl_errors());
  if (SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION) != 1) {
    throw ConfigError("cannot require TLS 1.2: " + openssl_errors());
  }
  SSL_CTX_set_options(ctx.get(), SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_RELEASE_BUFFERS);
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), cert_file.c_str()) != 1) {
    throw ConfigError("--tls-listen-cert-file " + cert_file + ": not a usable PEM certificate: " + openssl_errors());
  }
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    // It checks the key against the certificate already: a mismatch is reported as such.
    if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) {
      throw ConfigError("--tls-listen-key-file " + key_file + " is not the private key of --tls-listen-cert-file " +
                        cert_file + ": " + openssl_errors());
    }
    throw ConfigError("--tls-listen-key-file " + key_file + ": not a usable PEM private key: " + openssl_errors());
  }
  if (SSL_CTX_check_private_key(ctx.get()) != 1) {
    throw ConfigError("--tls-listen-key-file " + key_file + " is not the private key of --tls-listen-cert-file " +
                      cert_file + ": " + openssl_errors());
  }
  return ctx;
}

}  // namespace expiry
