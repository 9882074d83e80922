// Standard Webhooks signing: webhook-id, webhook-timestamp and webhook-signature
// ("v1,<base64 HMAC-SHA256 of '<id>.<timestamp>.<body>'>", one per secret, space-separated),
// with OpenSSL's HMAC. Pure (no I/O).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "functions/stream_entry.h"

namespace expiry {

// The base64 HMAC-SHA256 of `message` under `key`.
std::string hmac_sha256_base64(const std::string& key, const std::string& message);

// The webhook-signature header value for these secrets (decoded keys).
std::string webhook_signature(const std::vector<std::string>& keys, const std::string& id, int64_t timestamp_s,
                              const std::string& body);

// The webhook-id of an entry: "<task id>.<occurrence_ms>" (occurrence_ms: the entry's
// occurrence_ms field, else its due_ms), the same on every attempt of one occurrence, each part
// percent_encode_visible_ascii'd: visible ASCII only, so no entry can inject a header line, and a
// receiver whose HTTP stack decodes header bytes as Latin-1 (Python's http.server, Node's http)
// still hashes the bytes that were signed. An ASCII id without '%' is sent as it is.
std::string webhook_id_of(const StreamEntry& entry);

}  // namespace expiry
