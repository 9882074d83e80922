// See dead_letter_refs.h.
#include "inspector/dead_letter_refs.h"

#include "functions/key_layout.h"
#include "redis/redis_values.h"

namespace expiry {
namespace {

bool is_entry_id(std::string_view id) {
  const size_t dash = id.find('-');
  const auto ms = to_integer(id.substr(0, dash));
  if (!ms || *ms < 0 || id.front() == '+' || id.front() == '-') return false;
  if (dash == std::string_view::npos) return true;
  const std::string_view seq = id.substr(dash + 1);
  if (seq.empty() || seq.size() > 20) return false;
  for (char c : seq) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

std::vector<DeadStream> dead_streams(const TaskPlacement& layout, const std::string& dead_stream) {
  std::vector<DeadStream> out;
  if (!layout.bucket_streams()) {
    out.push_back({dead_stream.empty() ? layout.stream + ":dead" : dead_stream, 0, TaskPlacement::slot_of_bucket(0)});
    return out;
  }
  for (int b = 0; b < layout.buckets; ++b) {
    out.push_back({KeyLayout(layout.ns, b).bucket_dead_stream(), b, TaskPlacement::slot_of_bucket(b)});
  }
  return out;
}

std::string format_dead_ref(const std::vector<DeadStream>& streams, const DeadRef& ref) {
  if (streams.size() == 1) return ref.entry_id;
  return std::to_string(streams[ref.stream].bucket) + "/" + ref.entry_id;
}

std::optional<DeadRef> parse_dead_ref(const std::vector<DeadStream>& streams, std::string_view text,
                                      std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<DeadRef> {
    if (error) *error = why;
    return std::nullopt;
  };
  DeadRef ref;
  const size_t slash = text.find('/');
  if (streams.size() > 1) {
    if (slash == std::string_view::npos) {
      return fail("with bucket streams an entry is BUCKET/ENTRY-ID, as `dead list` prints it");
    }
    const auto b = to_integer(text.substr(0, slash));
    if (!b || *b < 0 || *b >= static_cast<long long>(streams.size()) || text.front() == '+' || text.front() == '-') {
      return fail("bucket " + std::string(text.substr(0, slash)) + " is not 0.." + std::to_string(streams.size() - 1));
    }
    ref.stream = static_cast<size_t>(*b);
    text.remove_prefix(slash + 1);
  } else if (slash != std::string_view::npos) {
    return fail("this namespace has one dead stream: give the entry id alone");
  }
  if (text.empty() || !is_entry_id(text)) return fail("'" + std::string(text) + "' is not a stream entry id (MS-SEQ)");
  ref.entry_id = std::string(text);
  return ref;
}

std::optional<long long> entry_id_ms(std::string_view entry_id) {
  return to_integer(entry_id.substr(0, entry_id.find('-')));
}

}  // namespace expiry
