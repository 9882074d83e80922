// Inspector::scan_orphans (orphan_scan.h). The walk is SCAN MATCH NS:{*}:t* COUNT 1000, so each
// call does bounded work in Redis. For each key found, one MULTI/EXEC of ZSCORE (is the id
// scheduled?) and EXISTS (is the key still there?) reads both at one instant, so a task claimed or
// cancelled while we look is not reported. A repair deletes an orphan with a small EVAL script
// that checks ZSCORE again in the same atomic step: a task scheduled after the read keeps its keys.
//
// On a Redis Cluster every primary is scanned in turn. A key and its bucket's schedule share a
// slot, so the two reads are one read-only EVAL routed by that slot (a MULTI could not follow a
// redirect), and the deletes are routed the same way, pipelined per node.
#include <unordered_set>

#include "base/errors.h"
#include "functions/key_layout.h"
#include "inspector/inspector.h"
#include "io/sync/routed_client.h"
#include "io/sync/sync_connection.h"
#include "producer/producer.h"
#include "producer/task_placement.h"
#include "redis/hash_slot.h"

namespace expiry {
namespace {

constexpr const char* kScanCount = "1000";  // keys Redis looks at per SCAN call

// KEYS[1] = NS:{B}:schedule, KEYS[2] = a trigger key or shadow hash of ARGV[1].
// Returns -1 (the id is scheduled: kept), else the DEL count (1 deleted, 0 already gone).
constexpr const char* kDeleteOrphanScript =
    "if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return -1 end\n"
    "return redis.call('DEL', KEYS[2])\n";

// KEYS[1] = NS:{B}:schedule, KEYS[2] = a trigger key or shadow hash of ARGV[1].
// Returns {1 if the id is scheduled else 0, 1 if the key exists else 0}, read at one instant.
constexpr const char* kKeyStateScript =
    "return {redis.call('ZSCORE', KEYS[1], ARGV[1]) and 1 or 0, redis.call('EXISTS', KEYS[2])}\n";

// Throws ReplyError for an error reply, naming the command.
void expect_no_error(const Reply& r, const std::string& what) {
  if (r.type == Reply::Type::Error) expect_ok(r, what);
}

class OrphanChecker {
 public:
  OrphanChecker(RoutedClient& redis, const std::string& ns, int buckets, const OrphanScanOptions& options,
                const std::function<void(const OrphanReport&)>& progress)
      : redis_(redis), keys_(ns), buckets_(buckets), options_(options), progress_(progress) {}

  // Scans every node holding data (one Redis, or each primary of a cluster).
  OrphanReport run() {
    for (const auto& node : redis_.primaries()) scan(node);
    return report_;
  }

 private:
  struct Candidate {
    std::string key;
    std::string id;
    TaskKeyKind kind;
    std::string schedule_key;
    int bucket;
  };

  void scan(const NodeAddress& node) {
    std::string cursor = "0";
    do {
      const Reply page =
          redis_.command_on(node, {"SCAN", cursor, "MATCH", keys_.task_keys_pattern(), "COUNT", kScanCount});
      expect_ok(page, "SCAN");
      if (page.type != Reply::Type::Array || page.elements.size() != 2 ||
          page.elements[1].type != Reply::Type::Array) {
        throw ReplyError("SCAN: unexpected reply " + page.describe());
      }
      cursor = page.elements[0].str;
      check_page(page.elements[1].elements);
      if (progress_) progress_(report_);
    } while (cursor != "0");
  }

  // Per candidate: {scheduled, present}, both read at one instant.
  std::vector<std::pair<bool, bool>> key_states(const std::vector<Candidate>& candidates) {
    std::vector<std::pair<bool, bool>> out;
    if (redis_.cluster()) {
      std::vector<ClusterClient::Routed> reads;
      for (const auto& c : candidates) {
        reads.push_back({key_hash_slot(c.key), {"EVAL", kKeyStateScript, "2", c.schedule_key, c.key, c.id}});
      }
      for (const Reply& r : redis_.batch(reads)) {
        expect_no_error(r, "EVAL (read a task key)");
        if (r.type != Reply::Type::Array || r.elements.size() != 2) {
          throw ReplyError("EVAL: unexpected reply " + r.describe());
        }
        out.emplace_back(r.elements[0].integer == 1, r.elements[1].integer == 1);
      }
      return out;
    }
    SyncConnection& conn = redis_.single();
    for (const auto& c : candidates) {
      conn.append({"MULTI"});
      conn.append({"ZSCORE", c.schedule_key, c.id});
      conn.append({"EXISTS", c.key});
      conn.append({"EXEC"});
    }
    for (const auto& c : candidates) {
      const Reply multi = conn.read_reply();
      const Reply zscore = conn.read_reply();
      const Reply exists = conn.read_reply();
      const Reply exec = conn.read_reply();
      expect_no_error(multi, "MULTI");
      expect_no_error(zscore, "ZSCORE");
      expect_no_error(exists, "EXISTS");
      expect_no_error(exec, "EXEC");
      if (exec.type != Reply::Type::Array || exec.elements.size() != 2) {
        throw ReplyError("EXEC: unexpected reply " + exec.describe());
      }
      expect_no_error(exec.elements[0], "ZSCORE " + c.schedule_key);
      expect_no_error(exec.elements[1], "EXISTS");
      out.emplace_back(exec.elements[0].type != Reply::Type::Nil,
                       exec.elements[1].type == Reply::Type::Integer && exec.elements[1].integer == 1);
    }
    return out;
  }

  void check_page(const std::vector<Reply>& found) {
    std::vector<Candidate> candidates;
    for (const Reply& k : found) {
      auto ref = keys_.parse_task_key(k.str);
      if (!ref) continue;  // matched NS:{*}:t* but is not one of ours
      candidates.push_back(
          {k.str, std::string(ref->id), ref->kind, KeyLayout(keys_.ns(), ref->bucket).schedule_key(), ref->bucket});
    }
    report_.examined += candidates.size();
    if (candidates.empty()) return;
    const auto states = key_states(candidates);
    std::vector<const Candidate*> orphans;
    for (size_t i = 0; i < candidates.size(); ++i) {
      const Candidate& c = candidates[i];
      const auto [scheduled, present] = states[i];
      if (scheduled && present && c.kind == TaskKeyKind::Shadow && c.bucket >= buckets_ &&
          unserved_seen_.insert(c.key).second) {
        ++report_.unserved;
        report_.unserved_buckets.insert(c.bucket);
        if (report_.unserved_examples.size() < static_cast<size_t>(options_.examples)) {
          report_.unserved_examples.push_back(c.key);
        }
      }
      if (scheduled || !present) continue;
      if (!seen_.insert(c.key).second) continue;  // SCAN may return a key twice
      (c.kind == TaskKeyKind::Shadow ? report_.orphan_shadows : report_.orphan_triggers) += 1;
      if (report_.examples.size() < static_cast<size_t>(options_.examples)) {
        report_.examples.push_back({c.key, c.id, c.kind});
      }
      orphans.push_back(&c);
    }
    if (options_.repair) repair(orphans);
  }

  void repair(const std::vector<const Candidate*>& orphans) {
    std::vector<ClusterClient::Routed> deletes;
    for (const Candidate* c : orphans) {
      deletes.push_back({key_hash_slot(c->key), {"EVAL", kDeleteOrphanScript, "2", c->schedule_key, c->key, c->id}});
    }
    for (const Reply& r : redis_.batch(deletes)) {
      expect_no_error(r, "EVAL (delete an orphan)");
      if (r.type != Reply::Type::Integer) throw ReplyError("EVAL: unexpected reply " + r.describe());
      if (r.integer < 0) {
        ++report_.kept_scheduled;
      } else if (r.integer == 0) {
        ++report_.already_gone;
      } else {
        ++report_.deleted;
      }
    }
  }

  RoutedClient& redis_;
  const KeyLayout keys_;
  const int buckets_;  // the namespace's bucket count: buckets at or above it are not served
  const OrphanScanOptions& options_;
  const std::function<void(const OrphanReport&)>& progress_;
  OrphanReport report_;
  std::unordered_set<std::string> seen_;           // orphan keys counted so far
  std::unordered_set<std::string> unserved_seen_;  // unserved shadow hashes counted so far
};

}  // namespace

OrphanReport Inspector::scan_orphans(const OrphanScanOptions& options,
                                     const std::function<void(const OrphanReport&)>& progress) {
  const TaskPlacement& layout = producer_.placement();
  return OrphanChecker(redis_, layout.ns, layout.buckets, options, progress).run();
}

}  // namespace expiry
