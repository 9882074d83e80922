// Unit tests of --help in words (src/config/help_formatter.h).
#include "config/help_formatter.h"

#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

namespace expiry {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(ValuePlaceholder, SaysWhatToGiveInsteadOfATypeName) {
  EXPECT_EQ(value_placeholder("--wait-timeout-ms", "INT:INT in [1 - 3600000]"), "MS");
  EXPECT_EQ(value_placeholder("--http-timeout-s", "INT"), "SECONDS");
  EXPECT_EQ(value_placeholder("--max-body-bytes", "INT"), "BYTES");
  EXPECT_EQ(value_placeholder("--password-file", "TEXT"), "FILE");
  EXPECT_EQ(value_placeholder("--config", "TEXT"), "FILE");
  EXPECT_EQ(value_placeholder("--tls-ca-cert-dir", "TEXT"), "DIR");
  EXPECT_EQ(value_placeholder("--redis-url", "TEXT"), "URL");
  EXPECT_EQ(value_placeholder("--metrics-port", "INT"), "PORT");
  EXPECT_EQ(value_placeholder("--tz", "TEXT"), "ZONE");
  EXPECT_EQ(value_placeholder("--listen", "TEXT"), "HOST:PORT");
  EXPECT_EQ(value_placeholder("--metrics-bind", "TEXT"), "ADDRESS");
  EXPECT_EQ(value_placeholder("--webhook", "TEXT"), "ENDPOINT");
  EXPECT_EQ(value_placeholder("--count", "INT:INT in [1 - 10000]"), "N");
  EXPECT_EQ(value_placeholder("--wait-replicas", "UINT"), "N");
  EXPECT_EQ(value_placeholder("--namespace", "TEXT"), "NAMESPACE");
  EXPECT_EQ(value_placeholder("--sentinel-master", "TEXT"), "MASTER");
}

TEST(ValuePlaceholder, AProgramsOwnTypeNameWins) {
  EXPECT_EQ(value_placeholder("--from", "TIME"), "TIME");
  EXPECT_EQ(value_placeholder("--misfire", "skip|once|all"), "skip|once|all");
  EXPECT_EQ(value_placeholder("--delay-ms", "DELAY:INT in [0 - 5]"), "DELAY");
}

TEST(RangeInWords, ReadsCli11sRangeText) {
  EXPECT_EQ(range_in_words("INT:INT in [0 - 1000]"), "0 to 1000");
  EXPECT_EQ(range_in_words("INT:INT in [1 - 3600000]"), "1 to 3600000");
  EXPECT_EQ(range_in_words("INT:INT in [-5 - 5]"), "-5 to 5");
  EXPECT_EQ(range_in_words("INT"), "");
  EXPECT_EQ(range_in_words("TEXT:FILE"), "");
}

// The help of an app with each kind of option, in the readable layout.
std::string help_of_sample() {
  CLI::App app{"sample", "sample"};
  auto* sub = app.add_subcommand("set", "set something");
  std::string tz = "UTC", id, file, payload;
  long long wait = 1000, replicas = 0, delay = 0;
  std::vector<std::string> entries;
  sub->add_option("id", id, "the id")->required();
  sub->add_option("--tz", tz, "IANA time zone")->capture_default_str();
  sub->add_option("--wait-timeout-ms", wait, "longest wait")->capture_default_str()->check(CLI::Range(1LL, 3600000LL));
  sub->add_option("--wait-replicas", replicas, "replicas")->check(CLI::Range(0, 1000));
  auto* delay_option = sub->add_option("--delay-ms", delay, "due in this many ms");
  sub->add_option("--file", file, "a file")->excludes(delay_option);
  sub->add_option("--payload", payload, "the payload")->envname("SAMPLE_PAYLOAD");
  sub->add_option("--entry", entries, "entries");
  bool json = false;
  sub->add_flag("--json", json, "print JSON");
  use_readable_help(app);
  return sub->help();
}

TEST(ReadableHelp, ShowsPlaceholdersAndSaysRangesDefaultsAndExclusionsInWords) {
  const std::string help = help_of_sample();
  SCOPED_TRACE(help);
  EXPECT_TRUE(has(help, "--tz ZONE ")) << "a placeholder";
  EXPECT_TRUE(has(help, "IANA time zone [default: UTC]"));
  EXPECT_TRUE(has(help, "--wait-timeout-ms MS "));
  EXPECT_TRUE(has(help, "longest wait [1 to 3600000; default: 1000]"));
  EXPECT_TRUE(has(help, "--wait-replicas N "));
  EXPECT_TRUE(has(help, "replicas [0 to 1000]"));
  EXPECT_TRUE(has(help, "a file [not with --delay-ms]"));
  EXPECT_TRUE(has(help, "--payload PAYLOAD "));
  EXPECT_TRUE(has(help, "the payload [env SAMPLE_PAYLOAD]"));
  EXPECT_TRUE(has(help, "--entry ENTRY ..."));
  EXPECT_TRUE(has(help, "the id [required]"));
  for (const char* artefact : {"TEXT", "INT", "=UTC", "=1000", " in [", "Excludes:", "REQUIRED", "Env:"}) {
    EXPECT_FALSE(has(help, artefact)) << artefact;
  }
}

}  // namespace
}  // namespace expiry
