// A second look at a connection that closed before Redis answered anything. A network fault does
// that (a proxy that accepts and drops, a reset), and so does a TLS-only port to plain text, and a
// TLS 1.3 server to a missing client certificate. One short blocking connection tells them apart,
// so that only a cause retrying cannot cure ends a program at start. Both probes take at most
// about three times `budget` (connect, handshake, one read), never throw, and answer nullopt when
// they learn nothing (the network fault case): the caller then retries as for any lost connection.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "io/tls_context.h"

namespace expiry {

// For a redis:// connection closed unanswered: does host:port speak TLS? A ClientHello that gets a
// ServerHello or a TLS alert back says so; then the text naming rediss://.
std::optional<std::string> probe_port_speaks_tls(const std::string& host, int port, std::chrono::milliseconds budget);

// For a rediss:// connection whose TLS handshake failed or timed out: does host:port speak plain
// Redis? A PING answered with a RESP simple string or error ('+' or '-') says so; then the text
// naming redis://.
std::optional<std::string> probe_port_speaks_plain_redis(const std::string& host, int port,
                                                         std::chrono::milliseconds budget);

// For a rediss:// connection closed after its handshake and before Redis's first reply: connects
// again with `tls`'s settings and reads without writing, which lets the server's alert (TLS 1.3
// sends "certificate required" only after the handshake) arrive before any reset could discard
// it. The alert as explain_failure names it, when it is a definite cause.
std::optional<std::string> probe_tls_refusal(const TlsContext& tls, const std::string& host, int port,
                                             std::chrono::milliseconds budget);

}  // namespace expiry
