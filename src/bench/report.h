// What expiry-bench prints and writes: one table per scenario (the relay beside its baselines),
// the same figures as JSON, the integrity checks (lost = 0, duplicated = 0 in every run, the only
// thing the bench asserts) and the targets with met / not met.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/run_tally.h"

namespace expiry::bench {

struct Table {
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;  // printed under the table
};

struct TargetCheck {
  std::string target;
  bool met = false;
  std::string measured;
};

class BenchReport {
 public:
  nlohmann::json& json() { return json_; }
  const nlohmann::json& json() const { return json_; }
  // json()["scenarios"][name], created on first use.
  nlohmann::json& scenario(const std::string& name) { return json_["scenarios"][name]; }
  void add_table(Table table) { tables_.push_back(std::move(table)); }
  // Records one run's integrity; any lost, duplicated or foreign entry fails the bench.
  void check_integrity(const std::string& run, size_t lost, size_t duplicated, size_t foreign = 0);
  bool integrity_ok() const;
  void add_target(TargetCheck check) { targets_.push_back(std::move(check)); }

  // Prints every table, the integrity summary and the targets.
  void print(std::ostream& out) const;
  // json() plus "integrity" and "targets".
  nlohmann::json final_json() const;

 private:
  struct Integrity {
    std::string run;
    size_t lost, duplicated, foreign;
  };
  nlohmann::json json_ = nlohmann::json::object();
  std::vector<Table> tables_;
  std::vector<Integrity> integrity_;
  std::vector<TargetCheck> targets_;
};

void print_table(std::ostream& out, const Table& table);
// `v` with `decimals` digits after the point.
std::string fixed(double v, int decimals = 0);
// The figures of one run as JSON (counts, via, lateness summaries, first/last fired).
nlohmann::json tally_json(const RunTally& tally);

}  // namespace expiry::bench
