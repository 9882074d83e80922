// expiry-ctl: schedules, cancels and inspects expiry-relay tasks from the command line.
#include <csignal>
#include <iostream>

#include <CLI/CLI.hpp>

#include "ctl/ctl_commands.h"
#include "ctl/ctl_settings.h"
#include "protocol/errors.h"
#include "protocol/text_escape.h"

int main(int argc, char** argv) {
  using namespace expiry;
  CLI::App app{"expiry-ctl: schedules, cancels and inspects expiry-relay tasks.\n"
               "The connection options work on every command, and can also be set as EXPIRY_RELAY_REDIS_URL,\n"
               "EXPIRY_RELAY_PASSWORD_FILE, EXPIRY_RELAY_NAMESPACE or in the --config JSON file (the relay's\n"
               "config file works: its other keys are ignored). Precedence: flag > env > file > default.\n"
               "The relay's stream and group are read the same way (EXPIRY_RELAY_STREAM, EXPIRY_RELAY_GROUP, keys\n"
               "\"stream\" and \"group\"; defaults NAMESPACE:stream and workers): stats and tail use them unless\n"
               "given --stream / --group, and show names the task's stream or this default.\n"
               "Exit codes: 0 ok, 1 Redis or connection error (check: orphans found and not deleted),\n"
               "2 usage or input error (nothing was written), 3 task not pending (show, reschedule,\n"
               "cancel --strict), 130 / 143 schedule --file stopped by SIGINT (Ctrl-C) / SIGTERM (it prints\n"
               "how many tasks were written; the others were not).",
               "expiry-ctl"};
  app.require_subcommand(0, 1);
  GlobalOptions global;
  add_global_options(app, global);

  ScheduleOptions schedule_opts;
  std::string bulk_file;
  long long delay_ms = 0, at_ms = 0;
  std::string payload, stream;
  auto* schedule = app.add_subcommand(
      "schedule",
      "Schedule a task (or replace the pending task with the same id), or every task of a JSON-lines file.\n"
      "File lines: {\"id\": \"..\", \"delay_ms\": N | \"at_ms\": EPOCH_MS, \"payload\": \"..\", \"stream\": \"..\"}\n"
      "(payload and stream optional). payload must be a JSON string: send a JSON document as a string\n"
      "(\"payload\": \"{\\\"n\\\": 1}\"), and any bytes as \"payload_b64\": \"<base64>\" instead (RFC 4648, with '='\n"
      "padding, no line breaks). The whole file is validated first: one bad line and nothing is written.\n"
      "Ctrl-C or SIGTERM during the writes: no new window of tasks is sent, the replies of those sent are\n"
      "read, the written and unwritten counts are printed, and the exit code is 130 (SIGINT) or 143 (SIGTERM).");
  add_global_options(*schedule, global);
  auto* id_opt = schedule->add_option("id", schedule_opts.id, "task id: 1..256 bytes of UTF-8, no control characters");
  auto* delay_opt = schedule->add_option("--delay-ms", delay_ms, "due this many milliseconds from now (Redis clock)");
  auto* at_opt = schedule->add_option("--at-ms", at_ms, "due at this time, in milliseconds since the Unix epoch");
  auto* payload_opt = schedule->add_option("--payload", payload, "payload delivered with the task (default: empty)");
  auto* payload_file_opt = schedule->add_option("--payload-file", schedule_opts.payload_file,
                                                "read the payload (any bytes) from this file");
  auto* stream_opt = schedule->add_option("--stream", stream, "stream to deliver to (default: the relay's stream)");
  auto* file_opt =
      schedule->add_option("--file", bulk_file, "schedule every line of this JSON-lines file ('-': stdin)");
  delay_opt->excludes(at_opt);
  payload_opt->excludes(payload_file_opt);
  for (auto* o : {id_opt, delay_opt, at_opt, payload_opt, payload_file_opt, stream_opt}) file_opt->excludes(o);

  RescheduleOptions reschedule_opts;
  long long re_delay_ms = 0, re_at_ms = 0;
  auto* reschedule = app.add_subcommand(
      "reschedule", "Move a pending task to a new due time, keeping its payload and stream (exit 3 if not pending).");
  add_global_options(*reschedule, global);
  reschedule->add_option("id", reschedule_opts.id, "task id")->required();
  auto* re_delay_opt = reschedule->add_option("--delay-ms", re_delay_ms, "due this many milliseconds from now");
  auto* re_at_opt = reschedule->add_option("--at-ms", re_at_ms, "due at this time, in milliseconds since the Unix epoch");
  re_delay_opt->excludes(re_at_opt);

  std::string cancel_id;
  bool strict = false;
  auto* cancel = app.add_subcommand("cancel", "Cancel a pending task.");
  add_global_options(*cancel, global);
  cancel->add_option("id", cancel_id, "task id")->required();
  cancel->add_flag("--strict", strict, "exit 3 when the task was not pending");

  std::string show_id;
  bool show_json = false;
  auto* show = app.add_subcommand("show", "Show a pending task (exit 3 when it is not pending).");
  add_global_options(*show, global);
  show->add_option("id", show_id, "task id")->required();
  show->add_flag("--json", show_json, "print one JSON object");

  StatsOptions stats_opts;
  auto* stats = app.add_subcommand("stats", "Show the schedule, its stream and the consumer group.");
  add_global_options(*stats, global);
  stats->add_flag("--json", stats_opts.json, "print one JSON object");
  add_stream_flag(*stats, global,
                  "stream to report on (default: the relay's: EXPIRY_RELAY_STREAM, \"stream\" of --config, else "
                  "NAMESPACE:stream)");
  add_group_flag(*stats, global,
                 "consumer group to report on (default: the relay's: EXPIRY_RELAY_GROUP, \"group\" of --config, else "
                 "workers)");

  auto* load = app.add_subcommand(
      "load-functions", "Load (or replace) the expiry_v1 Redis Function library and print its name.");
  add_global_options(*load, global);

  CheckOptions check_opts;
  auto* check = app.add_subcommand(
      "check",
      "Find trigger keys and shadow hashes whose id is not in the schedule (orphans, e.g. after the schedule\n"
      "key was deleted from outside), with a bounded SCAN. Exit 0 when there are none, 1 when some were found\n"
      "and not deleted. --repair deletes them, each after checking again, atomically, that its id is still not\n"
      "scheduled (a task scheduled meanwhile keeps its keys); exit 0 once done.");
  add_global_options(*check, global);
  check->add_flag("--repair", check_opts.repair, "delete the orphans found");
  check->add_flag("--json", check_opts.json, "print one JSON object");
  check->add_option("--examples", check_opts.examples, "orphan keys to list")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));

  TailOptions tail_opts;
  auto* tail = app.add_subcommand(
      "tail",
      "Print stream entries as they arrive (plain XREAD, not a consumer group), one line each:\n"
      "<entry-id> id=.. via=.. due_ms=.. fired_ms=.. late_ms=.. [other fields] payload=<the rest of the line>.\n"
      "A value that is empty or holds a space, '\"' or '=' is in double quotes (\\\" inside); a backslash is\n"
      "printed as \\\\, a line break as \\n, a tab as \\t, other control characters and non-UTF-8 bytes as \\xNN.");
  add_global_options(*tail, global);
  add_stream_flag(*tail, global,
                  "stream to read (default: the relay's: EXPIRY_RELAY_STREAM, \"stream\" of --config, else "
                  "NAMESPACE:stream)");
  tail->add_flag("--json", tail_opts.json,
                 "print one JSON object per entry: {\"entry_id\", \"late_ms\", \"fields\": {every field whose value is\n"
                 "UTF-8}, \"fields_b64\": {the others, in base64; only when there are any}}");
  tail->add_option("--count", tail_opts.count, "stop after this many entries (0: no limit)")->capture_default_str();
  tail->add_option("--timeout-ms", tail_opts.timeout_ms, "stop after this long without a new entry (0: never)")
      ->capture_default_str();
  tail->add_option("--from", tail_opts.from, "print entries after this id: '$' only new ones, '0' all")
      ->capture_default_str();

  add_version_flag(app, "expiry-ctl");
  if (auto code = parse_command_line(app, argc, argv, "expiry-ctl")) return *code;
  if (app.get_subcommands().empty()) {
    std::cerr << "expiry-ctl: a command is required\n\n" << app.help();
    return kExitUsage;
  }

  std::signal(SIGPIPE, SIG_IGN);
  try {
    const CtlTarget target = resolve_target(global, process_env());
    if (*schedule) {
      if (*file_opt) return run_bulk_schedule(target, bulk_file);
      if (!*id_opt) throw ConfigError("schedule needs a task id, or --file");
      if (*delay_opt) schedule_opts.delay_ms = delay_ms;
      if (*at_opt) schedule_opts.at_ms = at_ms;
      if (*payload_opt) schedule_opts.payload = payload;
      if (*stream_opt) schedule_opts.stream = stream;
      return run_schedule(target, schedule_opts);
    }
    if (*reschedule) {
      if (*re_delay_opt) reschedule_opts.delay_ms = re_delay_ms;
      if (*re_at_opt) reschedule_opts.at_ms = re_at_ms;
      return run_reschedule(target, reschedule_opts);
    }
    if (*cancel) return run_cancel(target, cancel_id, strict);
    if (*show) return run_show(target, show_id, show_json);
    if (*stats) return run_stats(target, stats_opts);
    if (*load) return run_load_functions(target);
    if (*check) return run_check(target, check_opts);
    if (*tail) return run_tail(target, tail_opts);
  } catch (const ConfigError& e) {
    std::cerr << "expiry-ctl: " << escape_text(e.what()) << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "expiry-ctl: " << escape_text(e.what()) << "\n";
    return kExitRedisError;
  }
  return kExitUsage;
}
