// check: finds trigger keys and shadow hashes whose id is not in the schedule (orphans, e.g.
// after the schedule ZSET was deleted from outside), and with --repair deletes them. It also
// reports pending tasks in buckets no relay serves (a bucket not below the namespace's count:
// they would never fire), which --repair leaves alone.
//
// The walk is SCAN MATCH NS:{*}:t* COUNT 1000, so each call does bounded work in Redis. For
// each key found, one MULTI/EXEC of ZSCORE (is the id scheduled?) and EXISTS (is the key still
// there?) reads both at one instant, so a task claimed or cancelled while we look is not
// reported. --repair deletes an orphan with a small EVAL script that checks ZSCORE again in the
// same atomic step: a task scheduled after the report keeps its keys.
//
// On a Redis Cluster every primary is scanned in turn. A key and its bucket's schedule share a
// slot, so the two reads are one read-only EVAL routed by that slot (a MULTI could not follow a
// redirect), and the deletes are routed the same way, pipelined per node.
#include <chrono>
#include <iostream>
#include <set>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/text_escape.h"
#include "ctl/ctl_commands.h"
#include "ctl/ctl_session.h"
#include "functions/key_layout.h"
#include "io/sync/routed_client.h"
#include "io/sync/sync_connection.h"
#include "redis/hash_slot.h"

namespace expiry {
namespace {

constexpr const char* kScanCount = "1000";  // keys Redis looks at per SCAN call
constexpr auto kProgressEvery = std::chrono::seconds(2);

// KEYS[1] = NS:{B}:schedule, KEYS[2] = a trigger key or shadow hash of ARGV[1].
// Returns -1 (the id is scheduled: kept), else the DEL count (1 deleted, 0 already gone).
constexpr const char* kDeleteOrphanScript =
    "if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return -1 end\n"
    "return redis.call('DEL', KEYS[2])\n";

// KEYS[1] = NS:{B}:schedule, KEYS[2] = a trigger key or shadow hash of ARGV[1].
// Returns {1 if the id is scheduled else 0, 1 if the key exists else 0}, read at one instant.
constexpr const char* kKeyStateScript =
    "return {redis.call('ZSCORE', KEYS[1], ARGV[1]) and 1 or 0, redis.call('EXISTS', KEYS[2])}\n";

struct Orphan {
  std::string key;
  std::string id;
  TaskKeyKind kind;
};

struct CheckReport {
  uint64_t examined = 0;         // task keys SCAN returned (a key can come back twice)
  uint64_t orphan_shadows = 0;
  uint64_t orphan_triggers = 0;
  std::vector<Orphan> examples;  // the first --examples orphans
  uint64_t deleted = 0;          // --repair
  uint64_t kept_scheduled = 0;   // --repair: scheduled again between the report and the delete
  uint64_t already_gone = 0;     // --repair: claimed, cancelled or expired in between
  uint64_t unserved = 0;         // pending tasks in a bucket not below the bucket count
  std::set<int> unserved_buckets;
  std::vector<std::string> unserved_examples;  // their shadow hashes, the first --examples

  uint64_t orphans() const { return orphan_shadows + orphan_triggers; }
};

const char* kind_name(TaskKeyKind kind) { return kind == TaskKeyKind::Shadow ? "shadow hash" : "trigger key"; }

// Throws ReplyError for an error reply, naming the command.
void expect_no_error(const Reply& r, const std::string& what) {
  if (r.type == Reply::Type::Error) expect_ok(r, what);
}

class OrphanChecker {
 public:
  OrphanChecker(RoutedClient& redis, const KeyLayout& keys, int buckets, const CheckOptions& options)
      : redis_(redis), keys_(keys), buckets_(buckets), options_(options) {}

  // Scans every node holding data (one Redis, or each primary of a cluster).
  CheckReport run() {
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
    const auto start = std::chrono::steady_clock::now();
    auto last_progress = start;
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
      if (std::chrono::steady_clock::now() - last_progress >= kProgressEvery) {
        last_progress = std::chrono::steady_clock::now();
        std::cerr << "progress: " << report_.examined << " task keys examined, " << report_.orphans()
                  << " orphans\n";
      }
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
  const KeyLayout& keys_;
  const int buckets_;  // the namespace's bucket count: buckets at or above it are not served
  const CheckOptions& options_;
  CheckReport report_;
  std::unordered_set<std::string> seen_;           // orphan keys counted so far
  std::unordered_set<std::string> unserved_seen_;  // unserved shadow hashes counted so far
};

std::string json_dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void print_json(const CtlTarget& target, const CheckOptions& options, const CheckReport& r) {
  nlohmann::json examples = nlohmann::json::array();
  for (const auto& o : r.examples) {
    examples.push_back({{"key", o.key}, {"id", o.id}, {"kind", o.kind == TaskKeyKind::Shadow ? "shadow" : "trigger"}});
  }
  nlohmann::json out = {{"namespace", target.ns},
                        {"examined", r.examined},
                        {"orphans", r.orphans()},
                        {"orphan_shadow_hashes", r.orphan_shadows},
                        {"orphan_trigger_keys", r.orphan_triggers},
                        {"examples", examples},
                        {"repair", options.repair},
                        {"deleted", nullptr},
                        {"kept_scheduled", nullptr},
                        {"already_gone", nullptr},
                        {"unserved_tasks", r.unserved},
                        {"unserved_buckets", r.unserved_buckets},
                        {"unserved_examples", r.unserved_examples},
                        {"clean", (r.orphans() == 0 || options.repair) && r.unserved == 0}};
  if (options.repair) {
    out["deleted"] = r.deleted;
    out["kept_scheduled"] = r.kept_scheduled;
    out["already_gone"] = r.already_gone;
  }
  std::cout << json_dump(out) << "\n";
}

// The unserved-bucket part of the text report.
void print_unserved(const CheckReport& r, int buckets) {
  if (r.unserved == 0) return;
  std::cout << "unserved: " << r.unserved << " pending task" << (r.unserved == 1 ? "" : "s") << " in bucket"
            << (r.unserved_buckets.size() == 1 ? "" : "s");
  for (int b : r.unserved_buckets) std::cout << " {" << b << "}";
  std::cout << ", which no relay serves (the namespace has " << buckets << " bucket" << (buckets == 1 ? "" : "s")
            << "): they will never fire; schedule them again under bucket CRC16(id) mod " << buckets
            << " (expiry-ctl schedule does), then cancel these\n";
  for (const auto& key : r.unserved_examples) std::cout << "  shadow hash " << escape_text(key) << "\n";
}

void print_text(const CtlTarget& target, const CheckOptions& options, const CheckReport& r, int buckets) {
  std::cout << "examined " << r.examined << " task keys of namespace " << target.ns << "\n";
  print_unserved(r, buckets);
  if (r.orphans() == 0) {
    std::cout << "no orphans: every trigger key and shadow hash belongs to a scheduled task\n";
    return;
  }
  std::cout << "orphans: " << r.orphans() << " (" << r.orphan_shadows << " shadow hashes, " << r.orphan_triggers
            << " trigger keys) whose id is not in the schedule\n";
  for (const auto& o : r.examples) std::cout << "  " << kind_name(o.kind) << " " << escape_text(o.key) << "\n";
  if (r.orphans() > r.examples.size()) std::cout << "  ... and " << (r.orphans() - r.examples.size()) << " more\n";
  if (options.repair) {
    std::cout << "deleted " << r.deleted << " orphaned keys (" << r.kept_scheduled
              << " kept: scheduled again meanwhile; " << r.already_gone << " already gone)\n";
  }
}

}  // namespace

int run_check(const CtlTarget& target, const CheckOptions& options) {
  if (options.examples < 0) throw ConfigError("--examples must not be negative");
  const KeyLayout keys(target.ns);
  CtlSession session(target);
  OrphanChecker checker(session.redis, keys, session.layout.buckets, options);
  const CheckReport report = checker.run();
  if (options.json) {
    print_json(target, options, report);
  } else {
    print_text(target, options, report, session.layout.buckets);
  }
  if (report.unserved > 0) {
    std::cerr << "expiry-ctl: " << report.unserved << " pending tasks in buckets no relay serves\n";
  }
  if ((report.orphans() == 0 || options.repair) && report.unserved == 0) return kExitOk;
  if (report.orphans() > 0 && !options.repair) {
    std::cerr << "expiry-ctl: " << report.orphans()
              << " orphaned keys found and not deleted; run 'expiry-ctl check --repair' to delete them\n";
  }
  return kExitOrphansFound;
}

}  // namespace expiry
