// Unit tests of the usage error for a mistyped command (src/config/unknown_command.h).
#include "config/unknown_command.h"

#include <algorithm>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

namespace expiry {
namespace {

// unknown_command_message after parsing `args` with a program shaped like expiry-ctl.
std::optional<std::string> message_for(std::vector<std::string> args) {
  CLI::App app{"program", "program"};
  app.require_subcommand(0, 1);
  std::string url, id;
  app.add_option("--redis-url", url);
  auto* schedule = app.add_subcommand("schedule", "");
  schedule->add_option("id", id);
  schedule->add_option("--redis-url", url);
  app.add_subcommand("reschedule", "");
  app.add_subcommand("list", "");
  auto* dead = app.add_subcommand("dead", "");
  dead->require_subcommand(1, 1);
  dead->add_subcommand("list", "")->add_option("--redis-url", url);
  dead->add_subcommand("purge", "");
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError&) {
    return unknown_command_message(app);
  }
  return std::string("(parsed)");
}

TEST(UnknownCommand, SuggestsTheClosestCommand) {
  EXPECT_EQ(message_for({"shedule"}), std::optional<std::string>("unknown command 'shedule'; did you mean 'schedule'?"));
  EXPECT_EQ(message_for({"--redis-url", "redis://h", "shedule"}),
            std::optional<std::string>("unknown command 'shedule'; did you mean 'schedule'?"));
  EXPECT_EQ(message_for({"lst", "--redis-url", "redis://h"}),
            std::optional<std::string>("unknown command 'lst'; did you mean 'list'?"));
}

TEST(UnknownCommand, NamesTheCommandPathOfASubcommand) {
  EXPECT_EQ(message_for({"dead", "lst"}), std::optional<std::string>("unknown command 'dead lst'; did you mean 'dead list'?"));
  EXPECT_EQ(message_for({"dead", "prge", "--redis-url", "x"}),
            std::optional<std::string>("unknown command 'dead prge'; did you mean 'dead purge'?"));
}

TEST(UnknownCommand, AWordCloseToNoCommandIsStillNamed) {
  EXPECT_EQ(message_for({"frobnicate"}), std::optional<std::string>("unknown command 'frobnicate'"));
}

TEST(UnknownCommand, OtherUsageErrorsAreLeftToCli11) {
  EXPECT_EQ(message_for({"schedule", "a", "b"}), std::nullopt);  // schedule has no subcommands
  EXPECT_EQ(message_for({"--no-such-flag"}), std::nullopt);
  EXPECT_EQ(message_for({"dead"}), std::nullopt);                // a subcommand is missing, none mistyped
  EXPECT_EQ(message_for({"schedule", "a"}), std::optional<std::string>("(parsed)"));
}

}  // namespace
}  // namespace expiry
