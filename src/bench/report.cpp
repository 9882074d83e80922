// See report.h.
#include "bench/report.h"

#include <algorithm>
#include <cstdio>
#include <iomanip>

namespace expiry::bench {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

void print_table(std::ostream& out, const Table& table) {
  std::vector<size_t> width(table.columns.size(), 0);
  for (size_t c = 0; c < table.columns.size(); ++c) width[c] = table.columns[c].size();
  for (const auto& row : table.rows) {
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    out << "|";
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      out << " " << (c == 0 ? std::left : std::right) << std::setw(static_cast<int>(width[c])) << cell << " |";
    }
    out << std::right << "\n";
  };
  out << "\n### " << table.title << "\n\n";
  line(table.columns);
  out << "|";
  for (size_t c = 0; c < width.size(); ++c) out << (c == 0 ? ":" : "") << std::string(width[c] + 1, '-') << (c == 0 ? "|" : ":|");
  out << "\n";
  for (const auto& row : table.rows) line(row);
  for (const auto& note : table.notes) out << "\n" << note << "\n";
}

void BenchReport::check_integrity(const std::string& run, size_t lost, size_t duplicated, size_t foreign) {
  integrity_.push_back({run, lost, duplicated, foreign});
}

bool BenchReport::integrity_ok() const {
  return std::all_of(integrity_.begin(), integrity_.end(),
                     [](const Integrity& i) { return i.lost == 0 && i.duplicated == 0 && i.foreign == 0; });
}

void BenchReport::print(std::ostream& out) const {
  for (const auto& t : tables_) print_table(out, t);
  Table targets{"Targets", {"target", "met", "measured"}, {}, {}};
  for (const auto& t : targets_) targets.rows.push_back({t.target, t.met ? "met" : "NOT met", t.measured});
  if (!targets_.empty()) print_table(out, targets);
  out << "\nintegrity: " << integrity_.size() << " runs, ";
  size_t bad = 0;
  for (const auto& i : integrity_) {
    if (i.lost == 0 && i.duplicated == 0 && i.foreign == 0) continue;
    ++bad;
    out << "\n  FAILED " << i.run << ": lost=" << i.lost << " duplicated=" << i.duplicated
        << " foreign=" << i.foreign;
  }
  out << (bad == 0 ? "lost = 0 and duplicated = 0 in every run: OK\n" : "\n");
}

nlohmann::json BenchReport::final_json() const {
  nlohmann::json j = json_;
  j["integrity"] = nlohmann::json::array();
  for (const auto& i : integrity_) {
    j["integrity"].push_back({{"run", i.run}, {"lost", i.lost}, {"duplicated", i.duplicated}, {"foreign", i.foreign}});
  }
  j["integrity_ok"] = integrity_ok();
  j["targets"] = nlohmann::json::array();
  for (const auto& t : targets_) j["targets"].push_back({{"target", t.target}, {"met", t.met}, {"measured", t.measured}});
  return j;
}

nlohmann::json tally_json(const RunTally& t) {
  return {{"expected", t.expected},
          {"forwarded", t.forwarded},
          {"drained_after_deadline", t.drained},
          {"lost", t.lost},
          {"duplicated", t.duplicated},
          {"foreign", t.foreign},
          {"via", t.via},
          {"lateness_ms", t.fired.to_json()},
          {"arrival_lateness_ms", t.arrival.to_json()},
          {"first_fired_ms", t.first_fired_ms},
          {"last_fired_ms", t.last_fired_ms}};
}

}  // namespace expiry::bench
