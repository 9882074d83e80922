// See unknown_command.h.
#include "config/unknown_command.h"

#include <vector>

#include <CLI/CLI.hpp>

#include "base/did_you_mean.h"

namespace expiry {

std::optional<std::string> unknown_command_message(const CLI::App& app) {
  // The chain of commands given: the program, then each subcommand CLI11 selected.
  const CLI::App* deepest = &app;
  std::string path;
  while (!deepest->get_subcommands().empty()) {
    deepest = deepest->get_subcommands().front();
    path += deepest->get_name() + " ";
  }
  const std::vector<std::string> left = deepest->remaining();
  if (left.empty() || left.front().empty() || left.front().front() == '-') return std::nullopt;
  std::vector<std::string> names;
  for (const CLI::App* sub : deepest->get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  if (names.empty()) return std::nullopt;
  const std::string& word = left.front();
  std::string message = "unknown command '" + path + word + "'";
  if (auto meant = closest_name(word, names)) message += "; did you mean '" + path + *meant + "'?";
  return message;
}

}  // namespace expiry
