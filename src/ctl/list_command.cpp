// list: the pending tasks in due order, a bounded page at a time, merged across the buckets.
#include <algorithm>
#include <deque>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "ctl/base64.h"
#include "ctl/ctl_commands.h"
#include "ctl/ctl_session.h"
#include "ctl/entry_format.h"
#include "ctl/redis_values.h"
#include "ctl/task_listing.h"
#include "io/sync/sync_connection.h"
#include "protocol/errors.h"
#include "protocol/key_layout.h"
#include "protocol/text_escape.h"

namespace expiry {
namespace {

// One bucket's next page, atomically: the members after (score, member) in due order (ties
// in byte order), at most `limit`, all with a score below `before` ('' for no bound).
// KEYS: schedule  ARGV: after_score ('' from the start), after_member, before, limit.
// The start rank is found in O(log N): ZRANK of the cursor's member when it still has the
// cursor's score, else the first rank of that score plus a binary search among the members
// sharing it (by rank, each ZRANGE O(log N)). Then one ZRANGE by rank of `limit` members, so
// Redis is never blocked for more than the page. Read-only (EVAL_RO).
constexpr const char* kPageScript = R"lua(
local key, after_score, after_member = KEYS[1], ARGV[1], ARGV[2]
local before, limit = tonumber(ARGV[3]), tonumber(ARGV[4])
local function le(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a <= #b
end
local start = 0
if after_score ~= '' then
  local s = tonumber(after_score)
  local own = redis.call('ZSCORE', key, after_member)
  if own and tonumber(own) == s then
    start = redis.call('ZRANK', key, after_member) + 1
  else
    local lo = redis.call('ZCOUNT', key, '-inf', '(' .. after_score)
    local hi = lo + redis.call('ZCOUNT', key, after_score, after_score)
    while lo < hi do
      local mid = math.floor((lo + hi) / 2)
      if le(redis.call('ZRANGE', key, mid, mid)[1], after_member) then lo = mid + 1 else hi = mid end
    end
    start = lo
  end
end
local page = redis.call('ZRANGE', key, start, start + limit - 1, 'WITHSCORES')
if before == nil then return page end
local out = {}
for i = 1, #page, 2 do
  if tonumber(page[i + 1]) >= before then break end
  out[#out + 1] = page[i]
  out[#out + 1] = page[i + 1]
end
return out
)lua";

constexpr size_t kPayloadShown = 1024;  // bytes of payload in --json; the rest: `show`

// The first ARGV[1] bytes of a shadow hash's payload (false when there is none), so that a page
// of large payloads costs expiry-ctl only what it prints. KEYS: shadow. Read-only (EVAL_RO).
constexpr const char* kPayloadHeadScript = R"lua(
local p = redis.call('HGET', KEYS[1], 'payload')
if not p then return false end
return string.sub(p, 1, tonumber(ARGV[1]))
)lua";
// Read past kPayloadShown by the longest UTF-8 character, so shown_payload can tell a character
// cut at the limit from one that is invalid in the payload itself.
constexpr size_t kPayloadHead = kPayloadShown + 4;
// Tasks whose details are read and printed per pipelined batch.
constexpr size_t kDetailChunk = 500;

struct BucketPage {
  int bucket = 0;
  std::deque<TaskPosition> buffered;
  std::optional<TaskPosition> after;  // the last member fetched (or the cursor)
  bool exhausted = false;
};

struct ListedTask {
  int bucket = 0;
  TaskPosition position;
};

std::vector<std::string> page_command(const KeyLayout& keys, const std::optional<TaskPosition>& after,
                                      const std::optional<long long>& before, size_t limit) {
  return {"EVAL_RO",
          kPageScript,
          "1",
          keys.schedule_key(),
          after ? after->score : "",
          after ? after->member : "",
          before ? std::to_string(*before) : "",
          std::to_string(limit)};
}

// Refills every bucket whose buffer is empty and that may hold more, in one pipelined batch.
void refill(RoutedClient& redis, const CtlLayout& layout, std::vector<BucketPage>& pages,
            const std::optional<long long>& before, size_t chunk) {
  std::vector<ClusterClient::Routed> commands;
  std::vector<BucketPage*> asked;
  for (BucketPage& p : pages) {
    if (!p.buffered.empty() || p.exhausted) continue;
    commands.push_back(
        {CtlLayout::slot_of_bucket(p.bucket), page_command(KeyLayout(layout.ns, p.bucket), p.after, before, chunk)});
    asked.push_back(&p);
  }
  if (commands.empty()) return;
  const std::vector<Reply> replies = redis.batch(commands);
  for (size_t i = 0; i < replies.size(); ++i) {
    const Reply& r = expect_ok(replies[i], "EVAL_RO (ZRANGE page)");
    if (r.type != Reply::Type::Array || r.elements.size() % 2 != 0) {
      throw ReplyError("EVAL_RO (ZRANGE page): unexpected reply " + r.describe());
    }
    BucketPage& p = *asked[i];
    for (size_t k = 0; k + 1 < r.elements.size(); k += 2) {
      p.buffered.push_back({r.elements[k + 1].str, r.elements[k].str});
    }
    if (!p.buffered.empty()) p.after = p.buffered.back();
    p.exhausted = r.elements.size() / 2 < chunk;
  }
}

// The index of the bucket whose next task comes first, or -1 when all are empty.
int earliest(const std::vector<BucketPage>& pages) {
  int best = -1;
  for (size_t i = 0; i < pages.size(); ++i) {
    if (pages[i].buffered.empty()) continue;
    if (best < 0 || position_before(pages[i].buffered.front(), pages[static_cast<size_t>(best)].buffered.front())) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

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
  std::optional<TaskPosition> cursor;
  if (!options.cursor.empty()) {
    std::string why;
    cursor = decode_list_cursor(options.cursor, &why);
    if (!cursor) throw ConfigError("--cursor is not a cursor printed by expiry-ctl list (" + why + ")");
  }
  if (options.due_before && !parse_due_before(*options.due_before, 0)) {
    throw ConfigError("--due-before must be epoch milliseconds, or +MS for that many milliseconds from now");
  }
  CtlSession session(target);
  const CtlLayout& layout = session.layout;
  std::optional<long long> before;
  if (options.due_before) {
    long long now = 0;
    if (due_before_is_relative(*options.due_before)) {
      const Reply time = session.redis.command({"TIME"}, CtlLayout::slot_of_bucket(0));
      expect_ok(time, "TIME");
      const auto t = time_reply_ms(time);
      if (!t) throw ReplyError("TIME: unexpected reply " + time.describe());
      now = *t;
    }
    before = parse_due_before(*options.due_before, now);
  }

  const size_t count = static_cast<size_t>(options.count);
  // Each bucket is read a chunk at a time: enough that an even spread needs no second round,
  // never more than the page.
  const size_t buckets = static_cast<size_t>(layout.buckets);
  const size_t chunk = std::min(count + 1, std::max<size_t>(16, 2 * count / buckets + 2));
  std::vector<BucketPage> pages(buckets);
  for (size_t b = 0; b < buckets; ++b) {
    pages[b].bucket = static_cast<int>(b);
    pages[b].after = cursor;
  }
  std::vector<ListedTask> listed;
  bool more = false;
  while (true) {
    refill(session.redis, layout, pages, before, chunk);
    const int next = earliest(pages);
    if (next < 0) break;
    if (listed.size() == count) {
      more = true;
      break;
    }
    BucketPage& p = pages[static_cast<size_t>(next)];
    listed.push_back({p.bucket, p.buffered.front()});
    p.buffered.pop_front();
  }

  // The details of each task listed, read after the page (a task that fired meanwhile shows
  // without payload and with its bucket's default stream), kDetailChunk tasks at a time and
  // printed as they come, so the memory a page costs is bounded by a chunk, whatever its
  // payloads (at most kPayloadHead bytes of each is read).
  const std::optional<std::string> next_cursor =
      more ? std::optional<std::string>(encode_list_cursor(listed.back().position)) : std::nullopt;
  const size_t per_task = options.json ? 3 : 2;
  // The same text as one json_dump of {"count", "next", "tasks"} (keys in order, compact).
  if (options.json) {
    std::cout << "{\"count\":" << listed.size()
              << ",\"next\":" << (next_cursor ? json_dump(*next_cursor) : std::string("null")) << ",\"tasks\":[";
  }
  for (size_t first = 0; first < listed.size(); first += kDetailChunk) {
    const size_t last = std::min(listed.size(), first + kDetailChunk);
    std::vector<ClusterClient::Routed> details;
    for (size_t i = first; i < last; ++i) {
      const ListedTask& t = listed[i];
      const KeyLayout keys(layout.ns, t.bucket);
      const int slot = CtlLayout::slot_of_bucket(t.bucket);
      details.push_back({slot, {"HSTRLEN", keys.shadow_key(t.position.member), "payload"}});
      details.push_back({slot, {"HGET", keys.shadow_key(t.position.member), "stream"}});
      if (options.json) {
        details.push_back({slot, {"EVAL_RO", kPayloadHeadScript, "1", keys.shadow_key(t.position.member),
                                  std::to_string(kPayloadHead)}});
      }
    }
    const std::vector<Reply> replies = session.redis.batch(details);
    for (size_t i = first; i < last; ++i) {
      const ListedTask& t = listed[i];
      const Reply* r = &replies[(i - first) * per_task];
      expect_ok(r[0], "HSTRLEN");
      expect_ok(r[1], "HGET");
      const long long size = r[0].type == Reply::Type::Integer ? r[0].integer : 0;
      const bool own_stream = r[1].type == Reply::Type::String;
      const std::string stream = own_stream ? r[1].str : layout.default_stream_of_bucket(t.bucket);
      const auto due = score_to_ms(t.position.score);
      const auto iso = due ? iso8601_utc(*due) : std::nullopt;
      if (!options.json) {
        std::cout << (due ? std::to_string(*due) : t.position.score) << " " << (iso ? *iso : "-") << " "
                  << format_entry_token(t.position.member) << " stream=" << format_entry_token(stream)
                  << " payload_bytes=" << size << "\n";
        continue;
      }
      expect_ok(r[2], "EVAL_RO (payload head)");
      nlohmann::json task = {{"id", t.position.member},
                             {"due_ms", due ? nlohmann::json(*due) : nlohmann::json()},
                             {"due", iso ? nlohmann::json(*iso) : nlohmann::json()},
                             {"bucket", t.bucket},
                             {"stream", stream},
                             {"default_stream", !own_stream},
                             {"payload_bytes", size}};
      const std::string head = r[2].type == Reply::Type::String ? r[2].str : "";
      const std::string shown = shown_payload(head, kPayloadShown);
      if (first_invalid_utf8(shown) == std::string::npos) {
        task["payload"] = shown;
      } else {
        task["payload_b64"] = base64_encode(shown);
      }
      task["payload_truncated"] = static_cast<long long>(shown.size()) < size;
      std::cout << (i == 0 ? "" : ",") << json_dump(task);
    }
  }
  if (options.json) {
    std::cout << "]}\n";
    return kExitOk;
  }
  std::cout.flush();
  if (next_cursor) {
    std::cerr << "expiry-ctl: more tasks follow; continue with --cursor " << *next_cursor << "\n";
  }
  return kExitOk;
}

}  // namespace expiry
