// TLS to Redis over hiredis_ssl: one OpenSSL context per distinct TlsSettings, loaded at first
// use and shared by every connection (async and blocking) of the process, and the one place that
// turns an OpenSSL failure into a message naming its cause. OpenSSL stays in the .cpp.
#pragma once

#include <memory>
#include <string>

#include "base/errors.h"
#include "config/tls_settings.h"

struct redisContext;
struct ssl_st;
struct ssl_ctx_st;

namespace expiry {

// The TLS setup does not fit the server (a certificate that does not verify, a CA or key that
// does not load, a plain-text port): the user must fix certificates or settings. At start it
// ends a program with exit 2, like any configuration error; a running service retries instead.
class TlsError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

class TlsContext {
 public:
  // The context for `settings` (settings.enabled must be set). Throws TlsError naming the file
  // and OpenSSL's reason when a CA, certificate or key does not load, or the key does not match
  // the certificate. Logs a warning the first time an insecure context is made.
  static std::shared_ptr<const TlsContext> get(const TlsSettings& settings);

  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // Starts TLS on `c`, a hiredis context connected (blocking: the handshake runs now) or
  // connecting (non-blocking: it runs with the first reads and writes) to `host`. Returns the
  // session, which hiredis owns and frees with `c`, or nullptr with `*error` set (for a
  // blocking context, explain_failure's text, and *definite as it sets it).
  ssl_st* start(redisContext* c, const std::string& host, std::string* error, bool* definite = nullptr) const;
  // A session for `host` with SNI and name verification set, not attached to any socket; the
  // caller frees it with SSL_free. nullptr with `*error` set when OpenSSL refuses.
  ssl_st* new_session(const std::string& host, std::string* error) const;

  // Why a TLS connection (`ssl`, from start(); may be null) to `host` failed, as a sentence
  // naming the cause and what to check ("TLS: certificate verify failed: certificate has
  // expired ..."); `fallback` (hiredis's own text) when OpenSSL knows nothing more, unless the
  // server closed the connection after the handshake and before its first reply (`answered`
  // false), which is how a TLS 1.3 server refuses a missing or unknown client certificate.
  // *definite (if given) tells a cause that retrying cannot cure (a certificate that does not
  // verify, an alert, a peer that does not speak TLS) from one a network fault can also
  // produce (a reset, an early end of stream, a timeout), which callers retry before they
  // blame the TLS setup. Consumes OpenSSL's error queue.
  std::string explain_failure(ssl_st* ssl, const std::string& host, const std::string& fallback, bool answered,
                              bool* definite = nullptr) const;
  // For a handshake that did not finish within `budget_text` ("2000 ms"): the text naming TLS.
  static bool handshake_finished(ssl_st* ssl);
  std::string explain_timeout(const std::string& budget_text) const;

  const TlsSettings& settings() const { return settings_; }

 private:
  explicit TlsContext(const TlsSettings& settings);

  TlsSettings settings_;
  ssl_ctx_st* ctx_ = nullptr;
};

// For a plain-text (redis://) connection closed before Redis answered anything: the hint that
// the port may accept only TLS. Empty when `tls_enabled`.
std::string plain_text_hint(bool tls_enabled);

}  // namespace expiry
