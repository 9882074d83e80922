// See help_formatter.h.
#include "config/help_formatter.h"

#include <cctype>
#include <memory>
#include <vector>

#include <CLI/CLI.hpp>

namespace expiry {
namespace {

// CLI11's names for the C++ types of values, which say nothing of what to give.
bool is_cli11_type_name(std::string_view name) {
  for (std::string_view generic : {"", "TEXT", "INT", "UINT", "FLOAT", "NUMBER", "BOOLEAN", "CHAR"}) {
    if (name == generic) return true;
  }
  return false;
}

std::string upper(std::string_view text) {
  std::string out;
  for (char c : text) out.push_back(c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return out;
}

bool is_repeated(const CLI::Option* opt) { return opt->get_expected_max() == CLI::detail::expected_max_vector_size; }

class ReadableHelpFormatter : public CLI::Formatter {
 public:
  // The placeholder after the name; positionals are their own placeholder.
  std::string make_option_opts(const CLI::Option* opt) const override {
    if (opt->get_type_size() == 0 || opt->get_type_name().empty()) return "";  // a flag
    std::string out;
    if (opt->nonpositional()) out = " " + value_placeholder(opt->get_name(), opt->get_type_name());
    if (is_repeated(opt)) out += " ...";
    return out;
  }

  std::string make_option_desc(const CLI::Option* opt) const override {
    std::vector<std::string> notes;
    if (opt->get_type_size() != 0 && !opt->get_type_name().empty()) {
      if (auto range = range_in_words(opt->get_type_name()); !range.empty()) notes.push_back(range);
      if (!opt->get_default_str().empty()) notes.push_back("default: " + opt->get_default_str());
    }
    if (opt->get_required()) notes.push_back("required");
    if (!opt->get_envname().empty()) notes.push_back("env " + opt->get_envname());
    const auto names = [](const std::set<CLI::Option*>& options) {
      std::string out;
      for (const CLI::Option* o : options) out += (out.empty() ? "" : ", ") + o->get_name();
      return out;
    };
    if (!opt->get_needs().empty()) notes.push_back("needs " + names(opt->get_needs()));
    if (!opt->get_excludes().empty()) notes.push_back("not with " + names(opt->get_excludes()));
    std::string desc = opt->get_description();
    if (notes.empty()) return desc;
    desc += desc.empty() ? "[" : " [";
    for (size_t i = 0; i < notes.size(); ++i) desc += (i == 0 ? "" : "; ") + notes[i];
    return desc + "]";
  }
};

void set_formatter(CLI::App& app, const std::shared_ptr<CLI::Formatter>& formatter) {
  app.formatter(formatter);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) set_formatter(*sub, formatter);
}

}  // namespace

std::string value_placeholder(std::string_view option_name, std::string_view type_name) {
  const std::string_view base = type_name.substr(0, type_name.find(':'));  // validators follow a ':'
  if (!is_cli11_type_name(base)) return std::string(base);
  std::string_view name = option_name;
  while (!name.empty() && name.front() == '-') name.remove_prefix(1);
  const size_t dash = name.rfind('-');
  const std::string_view last = dash == std::string_view::npos ? name : name.substr(dash + 1);
  struct Known {
    std::string_view word;
    const char* placeholder;
  };
  static constexpr Known kByLastWord[] = {
      {"ms", "MS"},       {"s", "SECONDS"},   {"bytes", "BYTES"},       {"file", "FILE"},
      {"config", "FILE"}, {"dir", "DIR"},     {"url", "URL"},           {"port", "PORT"},
      {"tz", "ZONE"},     {"bind", "ADDRESS"}, {"listen", "HOST:PORT"}, {"sentinel", "HOST:PORT,..."},
      {"webhook", "ENDPOINT"},
  };
  for (const auto& known : kByLastWord) {
    if (last == known.word) return known.placeholder;
  }
  if (base == "INT" || base == "UINT") return "N";
  return last.empty() ? std::string("VALUE") : upper(last);
}

std::string range_in_words(std::string_view type_name) {
  const size_t open = type_name.find(" in [");
  if (open == std::string_view::npos) return "";
  const std::string_view inside = type_name.substr(open + 5);
  const size_t sep = inside.find(" - ");
  const size_t close = inside.find(']');
  if (sep == std::string_view::npos || close == std::string_view::npos || close < sep) return "";
  return std::string(inside.substr(0, sep)) + " to " + std::string(inside.substr(sep + 3, close - sep - 3));
}

void use_readable_help(CLI::App& app) { set_formatter(app, std::make_shared<ReadableHelpFormatter>()); }

}  // namespace expiry
