// list: the pending tasks in due order, a bounded page at a time, merged across the buckets
// (Producer::list), printed as text lines or one JSON document.
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "base/errors.h"
#include "base/text_escape.h"
#include "ctl/ctl_commands.h"
#include "ctl/ctl_session.h"
#include "ctl/task_listing.h"
#include "functions/key_layout.h"
#include "inspector/entry_format.h"
#include "producer/list_cursor.h"
#include "producer/producer.h"
#include "redis/redis_values.h"

namespace expiry {
namespace {

constexpr size_t kPayloadShown = 1024;  // bytes of payload in --json; the rest: `show`

// The payload head read (Producer::list_details): past kPayloadShown by the longest UTF-8
// character, so shown_payload can tell a character cut at the limit from one that is invalid
// in the payload itself.
constexpr size_t kPayloadHead = kPayloadShown + 4;

std::string json_dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The first `limit` bytes of `payload` (which may itself be only the first kPayloadHead bytes of
// the stored payload), cut back to a whole UTF-8 character when that is what made it invalid.
std::string shown_payload(const std::string& payload, size_t limit) {
  if (payload.size() <= limit) return payload;
  std::string head = payload.substr(0, limit);
  const size_t bad = first_invalid_utf8(head);
  if (bad != std::string::npos && bad + 4 > head.size() && first_invalid_utf8(payload) != bad) head.resize(bad);
  return head;
}

}  // namespace

int run_list(const CtlTarget& target, const ListOptions& options) {
  if (options.count < 1 || options.count > kMaxListCount) {
    throw ConfigError("--count must be between 1 and " + std::to_string(kMaxListCount));
  }
  if (!options.cursor.empty()) {
    std::string why;
    if (!decode_list_cursor(options.cursor, &why)) {
      throw ConfigError("--cursor is not a cursor printed by expiry-ctl list (" + why + ")");
    }
  }
  if (options.due_before && !parse_due_before(*options.due_before, 0)) {
    throw ConfigError("--due-before must be epoch milliseconds, or +MS for that many milliseconds from now");
  }
  CtlSession session(target);
  ListQuery query;
  query.count = options.count;
  query.cursor = options.cursor;
  if (options.due_before) {
    const long long now = due_before_is_relative(*options.due_before) ? session.producer.now_ms() : 0;
    query.due_before_ms = parse_due_before(*options.due_before, now);
  }
  const TaskPage page = session.producer.list(query);

  // The details of each task listed are read after the page, a chunk at a time, and printed as
  // they come (Producer::list_details), so the memory a page costs is bounded by a chunk,
  // whatever its payloads (at most kPayloadHead bytes of each is read).
  // The same text as one json_dump of {"count", "next_cursor", "tasks"} (keys in order, compact);
  // "next_cursor" is the name GET /v1/tasks gives the cursor too.
  if (options.json) {
    std::cout << "{\"count\":" << page.tasks.size()
              << ",\"next_cursor\":" << (page.next_cursor ? json_dump(*page.next_cursor) : std::string("null")) << ",\"tasks\":[";
  }
  session.producer.list_details(page.tasks, options.json ? kPayloadHead : 0, [&](size_t i, const ListedTaskDetails& d) {
    const ListedTask& t = page.tasks[i];
    const auto iso = t.due_ms ? iso8601_utc(*t.due_ms) : std::nullopt;
    if (!options.json) {
      std::cout << (t.due_ms ? std::to_string(*t.due_ms) : t.score) << " " << (iso ? *iso : "-") << " "
                << format_entry_token(t.id) << " stream=" << format_entry_token(d.stream)
                << " payload_bytes=" << d.payload_bytes << "\n";
      return;
    }
    nlohmann::json task = {{"id", t.id},
                           {"due_ms", t.due_ms ? nlohmann::json(*t.due_ms) : nlohmann::json()},
                           {"due", iso ? nlohmann::json(*iso) : nlohmann::json()},
                           {"bucket", t.bucket},
                           {"stream", d.stream},
                           {"default_stream", d.default_stream},
                           {"payload_bytes", d.payload_bytes}};
    const std::string shown = shown_payload(d.payload_head, kPayloadShown);
    if (first_invalid_utf8(shown) == std::string::npos) {
      task["payload"] = shown;
    } else {
      task["payload_b64"] = base64_encode(shown);
    }
    task["payload_truncated"] = static_cast<long long>(shown.size()) < d.payload_bytes;
    std::cout << (i == 0 ? "" : ",") << json_dump(task);
  });
  if (options.json) {
    std::cout << "]}\n";
    return kExitOk;
  }
  std::cout.flush();
  if (page.next_cursor) {
    std::cerr << "expiry-ctl: more tasks follow; continue with --cursor " << *page.next_cursor << "\n";
  }
  return kExitOk;
}

}  // namespace expiry
