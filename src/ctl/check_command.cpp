// check: reports orphans (trigger keys and shadow hashes whose id is not in the schedule) and
// pending tasks in buckets no relay serves, and with --repair deletes the orphans, through
// Inspector::scan_orphans (inspector/orphan_scan.h says how it reads and deletes); a progress line
// on stderr every two seconds.
#include <chrono>
#include <iostream>

#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/text_escape.h"
#include "ctl/ctl_commands.h"
#include "ctl/ctl_session.h"
#include "inspector/inspector.h"

namespace expiry {
namespace {

constexpr auto kProgressEvery = std::chrono::seconds(2);

const char* kind_name(TaskKeyKind kind) { return kind == TaskKeyKind::Shadow ? "shadow hash" : "trigger key"; }

std::string json_dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void print_json(const CtlTarget& target, const CheckOptions& options, const OrphanReport& r) {
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
void print_unserved(const OrphanReport& r, int buckets) {
  if (r.unserved == 0) return;
  std::cout << "unserved: " << r.unserved << " pending task" << (r.unserved == 1 ? "" : "s") << " in bucket"
            << (r.unserved_buckets.size() == 1 ? "" : "s");
  for (int b : r.unserved_buckets) std::cout << " {" << b << "}";
  std::cout << ", which no relay serves (the namespace has " << buckets << " bucket" << (buckets == 1 ? "" : "s")
            << "): they will never fire; schedule them again under bucket CRC16(id) mod " << buckets
            << " (expiry-ctl schedule does), then cancel these\n";
  for (const auto& key : r.unserved_examples) std::cout << "  shadow hash " << escape_text(key) << "\n";
}

void print_text(const CtlTarget& target, const CheckOptions& options, const OrphanReport& r, int buckets) {
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
  CtlSession session(target);
  auto last_progress = std::chrono::steady_clock::now();
  const OrphanReport report = Inspector(session.producer).scan_orphans(
      {options.repair, options.examples}, [&](const OrphanReport& so_far) {
        if (std::chrono::steady_clock::now() - last_progress < kProgressEvery) return;
        last_progress = std::chrono::steady_clock::now();
        std::cerr << "progress: " << so_far.examined << " task keys examined, " << so_far.orphans() << " orphans\n";
      });
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
