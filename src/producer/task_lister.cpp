// See task_lister.h.
#include "producer/task_lister.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <string>

#include "base/errors.h"
#include "functions/key_layout.h"
#include "producer/list_cursor.h"
#include "redis/redis_values.h"

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

// The first ARGV[1] bytes of a shadow hash's payload (false when there is none), so that a page
// of large payloads costs the reader only what it shows. KEYS: shadow. Read-only (EVAL_RO).
constexpr const char* kPayloadHeadScript = R"lua(
local p = redis.call('HGET', KEYS[1], 'payload')
if not p then return false end
return string.sub(p, 1, tonumber(ARGV[1]))
)lua";
struct BucketPage {
  int bucket = 0;
  std::deque<TaskPosition> buffered;
  std::optional<TaskPosition> after;  // the last member fetched (or the cursor)
  bool exhausted = false;
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
void refill(RoutedClient& redis, const TaskPlacement& placement, std::vector<BucketPage>& pages,
            const std::optional<long long>& before, size_t chunk) {
  std::vector<ClusterClient::Routed> commands;
  std::vector<BucketPage*> asked;
  for (BucketPage& p : pages) {
    if (!p.buffered.empty() || p.exhausted) continue;
    commands.push_back(
        {TaskPlacement::slot_of_bucket(p.bucket), page_command(KeyLayout(placement.ns, p.bucket), p.after, before, chunk)});
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

}  // namespace

TaskPage list_tasks(RoutedClient& redis, const TaskPlacement& placement, const ListQuery& query) {
  if (query.count < 1 || query.count > kMaxListCount) {
    throw ConfigError("the page count must be between 1 and " + std::to_string(kMaxListCount));
  }
  std::optional<TaskPosition> cursor;
  if (!query.cursor.empty()) {
    std::string why;
    cursor = decode_list_cursor(query.cursor, &why);
    if (!cursor) throw ConfigError("not a cursor of a page of the listing (" + why + ")");
  }
  const size_t count = static_cast<size_t>(query.count);
  // Each bucket is read a chunk at a time: enough that an even spread needs no second round,
  // never more than the page.
  const size_t buckets = static_cast<size_t>(placement.buckets);
  const size_t chunk = std::min(count + 1, std::max<size_t>(16, 2 * count / buckets + 2));
  std::vector<BucketPage> pages(buckets);
  for (size_t b = 0; b < buckets; ++b) {
    pages[b].bucket = static_cast<int>(b);
    pages[b].after = cursor;
  }
  TaskPage page;
  std::optional<TaskPosition> last;
  while (true) {
    refill(redis, placement, pages, query.due_before_ms, chunk);
    const int next = earliest(pages);
    if (next < 0) break;
    if (page.tasks.size() == count) {
      page.next_cursor = encode_list_cursor(*last);
      break;
    }
    BucketPage& p = pages[static_cast<size_t>(next)];
    last = std::move(p.buffered.front());
    p.buffered.pop_front();
    page.tasks.push_back({last->member, last->score, score_to_ms(last->score), p.bucket});
  }
  return page;
}

void read_listed_details(RoutedClient& redis, const TaskPlacement& placement, const std::vector<ListedTask>& tasks,
                         size_t payload_head_bytes,
                         const std::function<void(size_t index, const ListedTaskDetails&)>& each) {
  const size_t per_task = payload_head_bytes > 0 ? 3 : 2;
  for (size_t first = 0; first < tasks.size(); first += kDetailChunk) {
    const size_t last = std::min(tasks.size(), first + kDetailChunk);
    std::vector<ClusterClient::Routed> details;
    for (size_t i = first; i < last; ++i) {
      const ListedTask& t = tasks[i];
      const std::string shadow = KeyLayout(placement.ns, t.bucket).shadow_key(t.id);
      const int slot = TaskPlacement::slot_of_bucket(t.bucket);
      details.push_back({slot, {"HSTRLEN", shadow, "payload"}});
      details.push_back({slot, {"HGET", shadow, "stream"}});
      if (payload_head_bytes > 0) {
        details.push_back({slot, {"EVAL_RO", kPayloadHeadScript, "1", shadow, std::to_string(payload_head_bytes)}});
      }
    }
    const std::vector<Reply> replies = redis.batch(details);
    for (size_t i = first; i < last; ++i) {
      const Reply* r = &replies[(i - first) * per_task];
      expect_ok(r[0], "HSTRLEN");
      expect_ok(r[1], "HGET");
      ListedTaskDetails d;
      d.payload_bytes = r[0].type == Reply::Type::Integer ? r[0].integer : 0;
      d.default_stream = r[1].type != Reply::Type::String;
      d.stream = d.default_stream ? placement.default_stream_of_bucket(tasks[i].bucket) : r[1].str;
      if (payload_head_bytes > 0) {
        expect_ok(r[2], "EVAL_RO (payload head)");
        if (r[2].type == Reply::Type::String) d.payload_head = r[2].str;
      }
      each(i, d);
    }
  }
}

}  // namespace expiry
