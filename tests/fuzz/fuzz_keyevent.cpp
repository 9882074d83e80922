// Fuzz target for the key layout and keyspace-event parsing (src/functions/key_layout.h).
// Input: up to four '\n'-separated parts: namespace, task id, a channel or key, a bucket
// (decimal). Missing parts are empty. Invariants:
// - namespace_error, task_id_error and db_from_expired_channel agree with independent
//   reference checks (task ids: nlohmann's strict UTF-8 check is the oracle);
// - an id parsed from KeyLayout(ns, bucket).trigger_key(id) round-trips, for any non-empty id;
// - no other key of the layout, and no key of another namespace, parses as a trigger key;
// - a key that does parse is exactly NS ":{" digits "}:t:" id.
#include <cctype>
#include <string>
#include <vector>

#include "base/text_escape.h"
#include "functions/key_layout.h"
#include "fuzz_check.h"
#include "fuzz_targets.h"

namespace expiry::fuzz {
namespace {

std::vector<std::string_view> split_parts(std::string_view input, size_t max_parts) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    auto nl = input.find('\n');
    if (nl == std::string_view::npos) break;
    parts.push_back(input.substr(0, nl));
    input.remove_prefix(nl + 1);
  }
  parts.push_back(input);
  parts.resize(max_parts);
  return parts;
}

bool all_digits(std::string_view s) {
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

bool reference_namespace_ok(std::string_view ns) {
  if (ns.empty() || ns.size() > kMaxNamespaceBytes) return false;
  for (char c : ns) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) return false;
  }
  return true;
}

// The encodings of the code points an id may not hold besides C0 and DEL: C1 controls
// (C2 80..C2 9F), U+2028/9, U+FEFF and the bidirectional controls. In valid UTF-8 their lead
// bytes (C2, E2, EF) only ever start a character, so a byte search finds exactly them.
bool has_forbidden_sequence(std::string_view id) {
  for (size_t i = 0; i + 1 < id.size(); ++i) {
    const auto b0 = static_cast<unsigned char>(id[i]);
    const auto b1 = static_cast<unsigned char>(id[i + 1]);
    if (b0 == 0xC2 && b1 >= 0x80 && b1 <= 0x9F) return true;
    if (i + 2 >= id.size()) continue;
    const auto b2 = static_cast<unsigned char>(id[i + 2]);
    if (b0 == 0xE2 && b1 == 0x80 && (b2 == 0x8E || b2 == 0x8F || (b2 >= 0xA8 && b2 <= 0xAE))) return true;
    if (b0 == 0xE2 && b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9) return true;
    if (b0 == 0xEF && b1 == 0xBB && b2 == 0xBF) return true;
  }
  return false;
}

bool reference_id_ok(std::string_view id) {
  if (id.empty() || id.size() > kMaxIdBytes) return false;
  for (char c : id) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7F) return false;
  }
  return json_accepts_utf8(id) && !has_forbidden_sequence(id);
}

void check_channel(std::string_view channel) {
  constexpr std::string_view kHead = "__keyevent@";
  constexpr std::string_view kTail = "__:expired";
  std::optional<int> expected;
  if (channel.size() > kHead.size() + kTail.size() && channel.substr(0, kHead.size()) == kHead &&
      channel.substr(channel.size() - kTail.size()) == kTail) {
    const auto digits = channel.substr(kHead.size(), channel.size() - kHead.size() - kTail.size());
    if (digits.size() <= 5 && all_digits(digits)) expected = std::stoi(std::string(digits));
  }
  require(db_from_expired_channel(channel) == expected, "db_from_expired_channel matches the grammar", channel);
}

void check_layout(const std::string& ns, int bucket, std::string_view id, std::string_view key) {
  const KeyLayout layout(ns, bucket);
  if (!id.empty()) {
    const std::string trigger = layout.trigger_key(id);
    const auto parsed = layout.id_from_trigger_key(trigger);
    require(parsed.has_value() && *parsed == id, "trigger key id round-trips", trigger);
    require(!layout.id_from_trigger_key(layout.shadow_key(id)), "a shadow key is not a trigger key", id);
    require(!layout.id_from_trigger_key(layout.health_channel(id)), "a health channel is not a trigger key", id);
    // Keys of a longer or shorter namespace sharing a prefix belong to another namespace.
    if (ns.size() < kMaxNamespaceBytes) {
      const KeyLayout longer(ns + "x", bucket);
      require(!layout.id_from_trigger_key(longer.trigger_key(id)), "another namespace's trigger key", id);
      require(!longer.id_from_trigger_key(trigger), "another namespace's trigger key", id);
    }
  }
  require(!layout.id_from_trigger_key(layout.schedule_key()), "the schedule key is not a trigger key", ns);
  require(!layout.id_from_trigger_key(layout.wake_channel()), "the wake channel is not a trigger key", ns);
  require(!layout.id_from_trigger_key(layout.default_stream()), "the stream is not a trigger key", ns);

  if (auto parsed = layout.id_from_trigger_key(key)) {
    require(!parsed->empty(), "a parsed trigger id is not empty", key);
    require(parsed->data() >= key.data() && parsed->data() + parsed->size() == key.data() + key.size(),
            "the parsed id is the tail of the key", key);
    const std::string_view head = key.substr(0, key.size() - parsed->size());  // NS:{digits}:t:
    const std::string open = ns + ":{";
    require(head.size() > open.size() + 4 && head.substr(0, open.size()) == open &&
                head.substr(head.size() - 4) == "}:t:",
            "a parsed trigger key has the form NS:{B}:t:id", key);
    const auto digits = head.substr(open.size(), head.size() - open.size() - 4);
    require(!digits.empty() && digits.size() <= 5 && all_digits(digits), "the bucket is 1..5 digits", key);
  }
}

}  // namespace

void fuzz_keyevent(std::string_view input) {
  const auto parts = split_parts(input, 4);
  const std::string_view ns = parts[0], id = parts[1], key = parts[2], bucket_text = parts[3];

  for (std::string_view s : {input, ns, id, key}) {
    require(namespace_error(s).has_value() != reference_namespace_ok(s), "namespace_error matches the rules", s);
    const auto id_error = task_id_error(s);
    require(id_error.has_value() != reference_id_ok(s), "task_id_error matches the rules", s);
    // The project's UTF-8 validator (src/utf8.h, behind first_invalid_utf8) agrees with the oracle.
    require((first_invalid_utf8(s) == std::string_view::npos) == json_accepts_utf8(s),
            "first_invalid_utf8 matches the UTF-8 oracle", s);
    check_channel(s);
  }

  if (!reference_namespace_ok(ns)) return;
  int bucket = 0;
  for (char c : bucket_text.substr(0, 9)) {
    if (std::isdigit(static_cast<unsigned char>(c))) bucket = bucket * 10 + (c - '0');
  }
  check_layout(std::string(ns), bucket % 100000, id, key);
  // The relay's own layout (bucket 0) also reads keys of any other bucket.
  if (bucket % 100000 != 0 && !id.empty()) {
    const auto other = KeyLayout(std::string(ns), bucket % 100000).trigger_key(id);
    const auto parsed = KeyLayout(std::string(ns)).id_from_trigger_key(other);
    require(parsed.has_value() && *parsed == id, "a trigger key of another bucket is read", other);
  }
}

}  // namespace expiry::fuzz
