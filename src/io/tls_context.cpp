// See tls_context.h. OpenSSL 3 initialises itself; hiredis_ssl only wraps the session.
#include "io/tls_context.h"

#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <hiredis/hiredis_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <spdlog/spdlog.h>

#include <mutex>
#include <vector>

namespace expiry {
namespace {

// OpenSSL's reason for the most recent error in the queue ("" if none), after which the queue
// is empty: an error left there would be blamed on the next connection.
std::string take_openssl_reason() {
  const unsigned long e = ERR_peek_last_error();
  std::string reason;
  if (e != 0) {
    const char* text = ERR_reason_error_string(e);
    reason = text != nullptr ? text : "OpenSSL error " + std::to_string(e);
  }
  ERR_clear_error();
  return reason;
}

bool contains(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

bool is_ip_address(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

std::string verify_hint(long result, const TlsSettings& tls, const std::string& name) {
  switch (result) {
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return "the server's certificate is not for '" + name +
             "': connect by a name it carries, or set tls_server_name to one";
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return "the server's certificate has expired: the server must renew it";
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "the server's certificate is not valid yet: check both clocks";
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
      return tls.ca_cert_file.empty() && tls.ca_cert_dir.empty()
                 ? "no CA of the system's store signed it: set tls_ca_cert_file to the CA that did"
                 : "check tls_ca_cert_file/tls_ca_cert_dir: they must hold the CA that signed the server's certificate";
    default:
      return "";
  }
}

std::mutex registry_mutex;
std::vector<std::weak_ptr<const TlsContext>>& registry() {
  static std::vector<std::weak_ptr<const TlsContext>> contexts;
  return contexts;
}

}  // namespace

TlsContext::TlsContext(const TlsSettings& settings) : settings_(settings) {
  ctx_ = SSL_CTX_new(TLS_client_method());
  if (ctx_ == nullptr) throw TlsError("TLS: cannot create an OpenSSL context: " + take_openssl_reason());
  SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
  // A throwing constructor runs no destructor: each failure frees the context itself.
  const auto fail = [this](const std::string& what) {
    const std::string reason = take_openssl_reason();
    SSL_CTX_free(ctx_);
    ctx_ = nullptr;
    throw TlsError("TLS: " + what + (reason.empty() ? "" : ": " + reason));
  };
  if (settings_.insecure) {
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_NONE, nullptr);
  } else {
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    const char* file = settings_.ca_cert_file.empty() ? nullptr : settings_.ca_cert_file.c_str();
    const char* dir = settings_.ca_cert_dir.empty() ? nullptr : settings_.ca_cert_dir.c_str();
    if (file == nullptr && dir == nullptr) {
      if (SSL_CTX_set_default_verify_paths(ctx_) != 1) fail("cannot load the system's CA store");
    } else if (SSL_CTX_load_verify_locations(ctx_, file, dir) != 1) {
      fail("cannot load CA certificates from " + (file != nullptr ? settings_.ca_cert_file : settings_.ca_cert_dir) +
           " (tls_ca_cert_" + (file != nullptr ? "file" : "dir") + ")");
    }
  }
  if (!settings_.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx_, settings_.cert_file.c_str()) != 1) {
      fail("cannot load the client certificate " + settings_.cert_file + " (tls_cert_file)");
    }
    if (SSL_CTX_use_PrivateKey_file(ctx_, settings_.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      fail("cannot load the private key " + settings_.key_file + " (tls_key_file)");
    }
    if (SSL_CTX_check_private_key(ctx_) != 1) {
      fail("the private key " + settings_.key_file + " does not match the certificate " + settings_.cert_file);
    }
  }
}

TlsContext::~TlsContext() {
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

std::shared_ptr<const TlsContext> TlsContext::get(const TlsSettings& settings) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  auto& contexts = registry();
  for (auto it = contexts.begin(); it != contexts.end();) {
    auto live = it->lock();
    if (!live) {
      it = contexts.erase(it);
      continue;
    }
    if (live->settings() == settings) return live;
    ++it;
  }
  std::shared_ptr<const TlsContext> made(new TlsContext(settings));
  if (settings.insecure) {
    spdlog::warn("TLS without verification (tls_insecure): the Redis server is not authenticated; use it for "
                 "testing only");
  }
  contexts.push_back(made);
  return made;
}

ssl_st* TlsContext::new_session(const std::string& host, std::string* error) const {
  ERR_clear_error();
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr) {
    *error = "TLS: cannot create a session: " + take_openssl_reason();
    return nullptr;
  }
  const std::string& name = settings_.name_for(host);
  const bool ip = is_ip_address(name);
  // SNI carries host names only (RFC 6066); verification checks the name or the IP address.
  if (!ip && SSL_set_tlsext_host_name(ssl, name.c_str()) != 1) {
    *error = "TLS: cannot set the server name '" + name + "': " + take_openssl_reason();
    SSL_free(ssl);
    return nullptr;
  }
  if (!settings_.insecure) {
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    const int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str())
                      : X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
    if (ok != 1) {
      *error = "TLS: cannot verify against the name '" + name + "'";
      SSL_free(ssl);
      return nullptr;
    }
  }
  return ssl;
}

ssl_st* TlsContext::start(redisContext* c, const std::string& host, std::string* error, bool* definite) const {
  SSL* ssl = new_session(host, error);
  if (ssl == nullptr) return nullptr;
  if (redisInitiateSSL(c, ssl) != REDIS_OK) {
    *error = explain_failure(ssl, host, c->errstr, false, definite);
    SSL_free(ssl);  // hiredis takes the session only when it succeeds
    return nullptr;
  }
  return ssl;
}

bool TlsContext::handshake_finished(ssl_st* ssl) { return ssl != nullptr && SSL_is_init_finished(ssl) != 0; }

std::string TlsContext::explain_timeout(const std::string& budget_text) const {
  return "TLS handshake timeout after " + budget_text +
         ": the server did not answer in TLS (is this a TLS port? For a plain-text port use redis://)";
}

std::string TlsContext::explain_failure(ssl_st* ssl, const std::string& host, const std::string& fallback,
                                        bool answered, bool* definite) const {
  bool ignored = false;
  if (definite == nullptr) definite = &ignored;
  *definite = false;
  if (answered) {
    // A working connection lost: no handshake hint applies (a restart, a cut, a reset).
    const std::string reason = take_openssl_reason();
    return reason.empty() ? fallback : fallback + " (TLS: " + reason + ")";
  }
  const std::string name = settings_.name_for(host);
  const long verified = ssl != nullptr ? SSL_get_verify_result(ssl) : X509_V_OK;
  if (verified != X509_V_OK && !settings_.insecure) {
    ERR_clear_error();
    *definite = true;
    const std::string hint = verify_hint(verified, settings_, name);
    return "TLS: certificate verify failed: " + std::string(X509_verify_cert_error_string(verified)) +
           (hint.empty() ? "" : " (" + hint + ")");
  }
  const std::string reason = take_openssl_reason();
  if (reason.empty()) {
    if (ssl != nullptr && SSL_is_init_finished(ssl) == 0) {
      // hiredis writes "SSL_connect failed: (null)" when OpenSSL gave no reason.
      const bool told = !fallback.empty() && fallback.find("(null)") == std::string::npos;
      return "TLS handshake failed" + (told ? ": " + fallback : std::string()) +
             " (the server did not complete a TLS handshake: is this a TLS port? For a plain-text port use "
             "redis://)";
    }
    if (ssl != nullptr) {
      return "TLS connection closed by the server before it answered: " + fallback +
             (settings_.cert_file.empty()
                  ? " (the server requires a client certificate: set tls_cert_file and tls_key_file)"
                  : " (does the server accept the client certificate " + settings_.cert_file + "?)");
    }
    return fallback;
  }
  // The server ending the stream mid-handshake is what a network fault does too.
  *definite = !contains(reason, "unexpected eof");
  std::string hint;
  if (contains(reason, "certificate required") ||
      (settings_.cert_file.empty() && (contains(reason, "handshake failure") || contains(reason, "bad certificate")))) {
    hint = settings_.cert_file.empty()
               ? "the server requires a client certificate: set tls_cert_file and tls_key_file"
               : "the server refused the client certificate " + settings_.cert_file;
  } else if (contains(reason, "unknown ca") || contains(reason, "bad certificate") ||
             contains(reason, "certificate unknown") || contains(reason, "decrypt error")) {
    hint = settings_.cert_file.empty() ? "the server refused the handshake"
                                       : "the server refused the client certificate " + settings_.cert_file +
                                             ": is it signed by a CA the server trusts?";
  } else if (contains(reason, "wrong version number") || contains(reason, "packet length too long") ||
             contains(reason, "record layer failure") || contains(reason, "unexpected eof")) {
    hint = "the server did not answer in TLS: is this a TLS port? For a plain-text port use redis://";
  }
  return "TLS handshake failed: " + reason + (hint.empty() ? "" : " (" + hint + ")");
}

std::string plain_text_hint(bool tls_enabled) {
  return tls_enabled ? "" : " (if this port accepts only TLS, use a rediss:// URL)";
}

}  // namespace expiry
