// expiry-ctl: schedules, cancels and inspects expiry-relay tasks from the command line.
#include <csignal>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "base/errors.h"
#include "base/text_escape.h"
#include "ctl/ctl_audit.h"
#include "ctl/ctl_commands.h"
#include "ctl/ctl_settings.h"
#include "ctl/recur_commands.h"
#include "base/duration_text.h"

namespace {

using namespace expiry;

// `schedule`: one task from its arguments, or every line of --file.
struct ScheduleCommand {
  CLI::App* command = nullptr;
  ScheduleOptions options;
  std::string bulk_file;
  long long delay_ms = 0;
  long long at_ms = 0;
  std::string payload_text;
  std::string stream_name;
  CLI::Option* id = nullptr;
  CLI::Option* delay = nullptr;
  CLI::Option* at = nullptr;
  CLI::Option* payload = nullptr;
  CLI::Option* payload_file = nullptr;
  CLI::Option* stream = nullptr;
  CLI::Option* file = nullptr;
  CLI::Option* wait_timeout = nullptr;
  CLI::Option* wait_replicas = nullptr;
  long long debounce_max_ms = 0;
  long long max_late_ms = 0;
  std::string traceparent;
  std::string webhook;
  CLI::Option* debounce = nullptr;
  CLI::Option* max_late = nullptr;
  CLI::Option* trace = nullptr;
  CLI::Option* webhook_flag = nullptr;
};

// The options of the range forms of cancel and run-now.
struct RangeFlags {
  std::string prefix;
  std::string due_before;
  std::string due_after;
  CLI::Option* prefix_option = nullptr;
  CLI::Option* before_option = nullptr;
  CLI::Option* after_option = nullptr;

  TaskRange range() const {
    TaskRange r;
    if (prefix_option != nullptr && *prefix_option) r.prefix = prefix;
    if (before_option != nullptr && *before_option) r.due_before = due_before;
    if (after_option != nullptr && *after_option) r.due_after = due_after;
    return r;
  }
  bool any() const { return (prefix_option && *prefix_option) || (before_option && *before_option) ||
                            (after_option && *after_option); }
};

struct RescheduleCommand {
  CLI::App* command = nullptr;
  RescheduleOptions options;
  long long delay_ms = 0;
  long long at_ms = 0;
  CLI::Option* delay = nullptr;
  CLI::Option* at = nullptr;
};

// `recur` and its subcommands (ctl/recur_commands.h).
struct RecurCommand {
  CLI::App* command = nullptr;
  CLI::App* set = nullptr;
  CLI::App* show = nullptr;
  CLI::App* list = nullptr;
  CLI::App* del = nullptr;
  CLI::App* pause = nullptr;
  CLI::App* resume = nullptr;
  CLI::App* preview = nullptr;
  RecurSetOptions set_options;
  RecurPreviewOptions preview_options;
  std::string id;
  bool json = false;
  long long max_late_ms = 0;
  std::string cron, every, start, end, from;
  bool allow_sub_second = false;
};

// Every subcommand and the values CLI11 writes into; it must not move once the options are added.
struct CtlCommandLine {
  GlobalOptions global;
  ScheduleCommand schedule;
  RescheduleCommand reschedule;
  CLI::App* cancel = nullptr;
  std::string cancel_id;
  CLI::Option* cancel_id_option = nullptr;
  RangeFlags cancel_range;
  bool strict = false;
  CLI::App* run_now = nullptr;
  std::string run_now_id;
  CLI::Option* run_now_id_option = nullptr;
  RangeFlags run_now_range;
  CLI::App* pause = nullptr;
  std::string pause_for;
  CLI::App* resume = nullptr;
  CLI::App* show = nullptr;
  std::string show_id;
  bool show_json = false;
  CLI::App* stats = nullptr;
  StatsOptions stats_options;
  CLI::App* load = nullptr;
  CLI::App* check = nullptr;
  CheckOptions check_options;
  CLI::App* tail = nullptr;
  TailOptions tail_options;
  CLI::App* list = nullptr;
  ListOptions list_options;
  std::string due_before;
  CLI::App* dead = nullptr;
  CLI::App* dead_list = nullptr;
  DeadListOptions dead_list_options;
  CLI::App* dead_show = nullptr;
  std::string dead_show_entry;
  bool dead_show_json = false;
  CLI::App* dead_purge = nullptr;
  DeadPurgeOptions dead_purge_options;
  long long older_than_ms = 0;
  CLI::App* dead_replay = nullptr;
  DeadReplayOptions dead_replay_options;
  std::string dead_stream;
  RecurCommand recur;
  CLI::App* audit = nullptr;
  AuditQuery audit_query;
  bool audit_json = false;
};

void add_schedule_command(CLI::App& app, CtlCommandLine& cl) {
  ScheduleCommand& s = cl.schedule;
  s.command = app.add_subcommand(
      "schedule",
      "Schedule a task (or replace the pending task with the same id), or every task of a JSON-lines file.\n"
      "File lines: {\"id\": \"..\", \"delay_ms\": N | \"at_ms\": EPOCH_MS, \"payload\": \"..\", \"stream\": \"..\"}\n"
      "(payload and stream optional), and optionally \"if_absent\": true, \"debounce_max_ms\": M, \"max_late_ms\": N,\n"
      "\"traceparent\": \"..\", \"webhook\": \"..\" as the flags below. payload must be a JSON string: send a JSON document as a string\n"
      "(\"payload\": \"{\\\"n\\\": 1}\"), and any bytes as \"payload_b64\": \"<base64>\" instead (RFC 4648, with '='\n"
      "padding, no line breaks). The whole file is validated first: one bad line and nothing is written.\n"
      "Ctrl-C or SIGTERM during the writes: no new window of tasks is sent, the replies of those sent are\n"
      "read, the written and unwritten counts are printed, and the exit code is 130 (SIGINT) or 143 (SIGTERM).\n"
      "With --if-absent, a task already pending is kept: it prints 'kept ID due_ms=<its due time>' and exits 0\n"
      "(the summary of --file counts the kept tasks).");
  add_global_options(*s.command, cl.global);
  s.id = s.command->add_option("id", s.options.id, "task id: 1..256 bytes of UTF-8, no control characters");
  s.delay = s.command->add_option("--delay-ms", s.delay_ms, "due this many milliseconds from now (Redis clock)");
  s.at = s.command->add_option("--at-ms", s.at_ms, "due at this time, in milliseconds since the Unix epoch");
  s.payload = s.command->add_option("--payload", s.payload_text, "payload delivered with the task (default: empty)");
  s.payload_file = s.command->add_option("--payload-file", s.options.payload_file,
                                          "read the payload (any bytes) from this file");
  s.stream = s.command->add_option("--stream", s.stream_name, "stream to deliver to (default: the relay's stream)");
  s.file = s.command->add_option("--file", s.bulk_file, "schedule every line of this JSON-lines file ('-': stdin)");
  auto* if_absent = s.command->add_flag(
      "--if-absent", s.options.task.if_absent,
      "keep a pending task with this id instead of replacing it: prints 'kept', its due time, and exits 0");
  s.debounce = s.command->add_option(
      "--debounce-max-ms", s.debounce_max_ms,
      "debounce: move a pending task to the new due time, but never later than this many ms after the\n"
      "call that first scheduled it (kept while it stays pending)");
  s.max_late = s.command->add_option(
      "--max-late-ms", s.max_late_ms,
      "lateness limit: a task claimed more than this many ms after its due time goes to the dead letters\n"
      "(reason late) instead of its stream; overrides the relay's --max-late-ms (0: no limit)");
  s.trace = s.command->add_option("--traceparent", s.traceparent,
                                  "W3C trace context (00-<32 hex>-<16 hex>-<2 hex>), copied into the stream entry");
  s.webhook_flag = s.command->add_option(
      "--webhook", s.webhook,
      "the expiry-webhook endpoint that delivers the task (1-64 characters [A-Za-z0-9_.-]), copied into the\n"
      "stream entry as the field webhook (docs/webhooks.md)");
  if_absent->excludes(s.debounce);
  auto* wait = s.command->add_option(
      "--wait-replicas", s.options.wait.replicas,
      "after the writes, WAIT until this many replicas of every primary written to have them; fewer within\n"
      "--wait-timeout-ms: exit 4 (the tasks are written, but a crash of the primary could still lose them).\n"
      "Through Sentinel the default is the replicas the sentinels see healthy, and a shortfall finds the\n"
      "master again and writes again (a failover may have discarded the write); 0 turns it off");
  s.wait_replicas = wait;
  wait->check(CLI::Range(0, 1000));
  s.wait_timeout = s.command->add_option("--wait-timeout-ms", s.options.wait.timeout_ms,
                                         "longest WAIT of --wait-replicas (and of the Sentinel default)")
                       ->capture_default_str()
                       ->check(CLI::Range(1LL, 3600000LL));
  s.delay->excludes(s.at);
  s.payload->excludes(s.payload_file);
  for (auto* o : {s.id, s.delay, s.at, s.payload, s.payload_file, s.stream, if_absent, s.debounce, s.max_late, s.trace, s.webhook_flag}) {
    s.file->excludes(o);
  }
}

void add_reschedule_command(CLI::App& app, CtlCommandLine& cl) {
  RescheduleCommand& r = cl.reschedule;
  r.command = app.add_subcommand(
      "reschedule", "Move a pending task to a new due time, keeping its payload and stream (exit 3 if not pending).");
  add_global_options(*r.command, cl.global);
  r.command->add_option("id", r.options.id, "task id")->required();
  r.delay = r.command->add_option("--delay-ms", r.delay_ms, "due this many milliseconds from now");
  r.at = r.command->add_option("--at-ms", r.at_ms, "due at this time, in milliseconds since the Unix epoch");
  r.delay->excludes(r.at);
}

// --prefix, --due-before and (with `after`) --due-after of a range command.
void add_range_flags(CLI::App& command, RangeFlags& f, bool after) {
  f.prefix_option = command.add_option("--prefix", f.prefix, "only tasks whose id starts with this (not empty)");
  f.before_option = command.add_option(
      "--due-before", f.due_before,
      "only tasks due before this time: epoch milliseconds, or +MS for MS milliseconds from now (Redis clock)");
  f.before_option->type_name("TIME");
  if (after) {
    f.after_option = command.add_option("--due-after", f.due_after,
                                        "only tasks due after this time: epoch milliseconds, or +MS from now");
    f.after_option->type_name("TIME");
  }
}

void add_task_commands(CLI::App& app, CtlCommandLine& cl) {
  cl.cancel = app.add_subcommand(
      "cancel",
      "Cancel a pending task, or every pending task matching --prefix, --due-before and --due-after (all given\n"
      "must match; bounds exclusive), bucket by bucket in calls that each examine at most 500 tasks (and stop\n"
      "after ~1 ms), so Redis is never blocked for long; prints the count cancelled. A task claimed at the same\n"
      "moment is either cancelled or forwarded, never both.");
  add_global_options(*cl.cancel, cl.global);
  cl.cancel_id_option = cl.cancel->add_option("id", cl.cancel_id, "task id");
  auto* strict = cl.cancel->add_flag("--strict", cl.strict, "exit 3 when the task was not pending");
  add_range_flags(*cl.cancel, cl.cancel_range, true);
  for (auto* o : {cl.cancel_range.prefix_option, cl.cancel_range.before_option, cl.cancel_range.after_option}) {
    o->excludes(cl.cancel_id_option)->excludes(strict);
  }

  cl.run_now = app.add_subcommand(
      "run-now",
      "Make a pending task due now (payload, stream and attempt kept; the stream entry gets promoted_ms and\n"
      "promoted_from_ms): prints its previous and new due time, exit 3 when it is not pending. Or, with\n"
      "--due-before and/or --prefix, every pending task not yet due that matches, in bounded calls per bucket;\n"
      "prints the count promoted.");
  add_global_options(*cl.run_now, cl.global);
  cl.run_now_id_option = cl.run_now->add_option("id", cl.run_now_id, "task id");
  add_range_flags(*cl.run_now, cl.run_now_range, false);
  for (auto* o : {cl.run_now_range.prefix_option, cl.run_now_range.before_option}) o->excludes(cl.run_now_id_option);

  cl.pause = app.add_subcommand(
      "pause",
      "Pause delivery for the namespace (every bucket; on a cluster each on its node): no claim or sweep\n"
      "forwards anything, on every relay, across restarts; schedule, cancel, list and stats still work. Tasks\n"
      "that fall due are held, and forwarded oldest first on resume or when --for runs out (a task's lateness\n"
      "limit applies to them). Prints the end of the pause, the buckets and the tasks held.");
  add_global_options(*cl.pause, cl.global);
  cl.pause->add_option("--for", cl.pause_for,
                       "pause for this long: milliseconds, or with a unit ms, s, m or h (30s, 5m, 2h); default: until "
                       "resume")
      ->type_name("DURATION");

  cl.resume = app.add_subcommand(
      "resume", "End the pause of every bucket: the held tasks are forwarded at once, oldest first. Prints how many\n"
                "buckets were paused and the overdue tasks being forwarded.");
  add_global_options(*cl.resume, cl.global);


  cl.show = app.add_subcommand("show", "Show a pending task (exit 3 when it is not pending).");
  add_global_options(*cl.show, cl.global);
  cl.show->add_option("id", cl.show_id, "task id")->required();
  cl.show->add_flag("--json", cl.show_json, "print one JSON object");
}

void add_stats_command(CLI::App& app, CtlCommandLine& cl) {
  cl.stats = app.add_subcommand("stats", "Show the schedule, its stream and the consumer group.");
  add_global_options(*cl.stats, cl.global);
  cl.stats->add_flag("--json", cl.stats_options.json, "print one JSON object");
  add_stream_flag(*cl.stats, cl.global,
                  "stream to report on (default: the relay's: EXPIRY_RELAY_STREAM, \"stream\" of --config, else "
                  "NAMESPACE:stream)");
  add_group_flag(*cl.stats, cl.global,
                 "consumer group to report on (default: the relay's: EXPIRY_RELAY_GROUP, \"group\" of --config, else "
                 "workers)");
}

void add_check_command(CLI::App& app, CtlCommandLine& cl) {
  cl.load = app.add_subcommand(
      "load-functions", "Load (or replace) the expiry_v1 Redis Function library and print its name.");
  add_global_options(*cl.load, cl.global);


  cl.check = app.add_subcommand(
      "check",
      "Find trigger keys and shadow hashes whose id is not in the schedule (orphans, e.g. after the schedule\n"
      "key was deleted from outside), with a bounded SCAN. Exit 0 when there are none, 1 when some were found\n"
      "and not deleted. --repair deletes them, each after checking again, atomically, that its id is still not\n"
      "scheduled (a task scheduled meanwhile keeps its keys); exit 0 once done.");
  add_global_options(*cl.check, cl.global);
  cl.check->add_flag("--repair", cl.check_options.repair, "delete the orphans found");
  cl.check->add_flag("--json", cl.check_options.json, "print one JSON object");
  cl.check->add_option("--examples", cl.check_options.examples, "orphan keys to list")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
}

void add_tail_command(CLI::App& app, CtlCommandLine& cl) {
  cl.tail = app.add_subcommand(
      "tail",
      "Print stream entries as they arrive (plain XREAD, not a consumer group), one line each:\n"
      "<entry-id> id=.. via=.. due_ms=.. fired_ms=.. late_ms=.. [other fields] payload=<the rest of the line>.\n"
      "A value that is empty or holds a space, '\"' or '=' is in double quotes (\\\" inside); a backslash is\n"
      "printed as \\\\, a line break as \\n, a tab as \\t, other control characters and non-UTF-8 bytes as \\xNN.");
  add_global_options(*cl.tail, cl.global);
  add_stream_flag(*cl.tail, cl.global,
                  "stream to read (default: the relay's: EXPIRY_RELAY_STREAM, \"stream\" of --config, else "
                  "NAMESPACE:stream)");
  cl.tail->add_flag("--json", cl.tail_options.json,
                 "print one JSON object per entry: {\"entry_id\", \"late_ms\", \"fields\": {every field whose value is\n"
                 "UTF-8}, \"fields_b64\": {the others, in base64; only when there are any}}");
  cl.tail->add_option("--count", cl.tail_options.count, "stop after this many entries (0: no limit)")->capture_default_str();
  cl.tail->add_option("--timeout-ms", cl.tail_options.timeout_ms, "stop after this long without a new entry (0: never)")
      ->capture_default_str();
  cl.tail->add_option("--from", cl.tail_options.from, "print entries after this id: '$' only new ones, '0' all")
      ->type_name("ENTRY_ID")
      ->capture_default_str();
}

void add_list_command(CLI::App& app, CtlCommandLine& cl) {
  cl.list = app.add_subcommand(
      "list",
      "List pending tasks in due order (ties by id bytes), a page at a time, merged across the buckets.\n"
      "Text: one line per task: <due_ms> <due, ISO-8601 UTC> <id> stream=<stream> payload_bytes=<n>; when more\n"
      "tasks follow, the cursor to continue with is printed on stderr. Each call reads bounded ZRANGEs of\n"
      "each bucket's schedule, so it never blocks Redis for long, whatever the schedule's size. Paging sees\n"
      "every task pending throughout exactly once; one added meanwhile is seen if it is due after the cursor.");
  add_global_options(*cl.list, cl.global);
  cl.list->add_option("--count", cl.list_options.count, "tasks per page")
      ->capture_default_str()
      ->check(CLI::Range(1LL, kMaxListCount));
  cl.list->add_option("--due-before", cl.due_before,
                      "only tasks due before this time: epoch milliseconds, or +MS for MS milliseconds from now "
                      "(Redis clock)")
      ->type_name("TIME");
  cl.list->add_option("--cursor", cl.list_options.cursor, "continue after the page that printed this cursor");
  cl.list->add_flag("--json", cl.list_options.json,
                    "print one JSON object: {\"tasks\": [{\"id\", \"due_ms\", \"due\", \"bucket\", \"stream\",\n"
                    "\"default_stream\", \"payload_bytes\", \"payload\" (or \"payload_b64\" when not UTF-8; the first 1024\n"
                    "bytes), \"payload_truncated\"}], \"count\": N, \"next_cursor\": cursor or null}");
}

void add_audit_command(CLI::App& app, CtlCommandLine& cl) {
  cl.audit = app.add_subcommand(
      "audit",
      "Show the audit trail (NAMESPACE:audit), newest first: every write and admin action through expiry-api (by\n"
      "token name) or expiry-ctl (by OS user), with its target and outcome. Reads are not recorded. The trail\n"
      "keeps about audit_max_entries records (setting; EXPIRY_RELAY_AUDIT_MAX_ENTRIES; default 100000).");
  add_global_options(*cl.audit, cl.global);
  cl.audit->add_option("--count", cl.audit_query.count, "records to show")
      ->capture_default_str()
      ->check(CLI::Range(1LL, kMaxAuditCount));
  cl.audit->add_option("--before", cl.audit_query.before, "only records older than this entry (what 'more:' names)");
  cl.audit->add_option("--actor", cl.audit_query.actor, "only this token name or OS user");
  cl.audit->add_option("--action", cl.audit_query.action, "only actions containing this text (\"dead\", \"DELETE\")");
  cl.audit->add_option("--via", cl.audit_query.via, "only records made through api or cli")
      ->check(CLI::IsMember({"api", "cli"}));
  cl.audit->add_option("--target", cl.audit_query.target, "only targets containing this text");
  cl.audit->add_flag("--json", cl.audit_json,
                     "print one JSON object: {\"records\": [{\"entry\", \"time_ms\", \"actor\", \"via\", \"action\", "
                     "\"target\", \"outcome\"}], \"count\", \"next_before\"}");
}

// The text of a range form's flags: "prefix=P due_before=B due_after=A".
std::string range_text(const RangeFlags& f) {
  const TaskRange r = f.range();
  std::string out;
  if (r.prefix) out += "prefix=" + *r.prefix;
  if (r.due_before) out += std::string(out.empty() ? "" : " ") + "due_before=" + *r.due_before;
  if (r.due_after) out += std::string(out.empty() ? "" : " ") + "due_after=" + *r.due_after;
  return out;
}

std::string entries_text(const std::vector<std::string>& entries, bool all) {
  if (all) return "all";
  std::string out = "entries=";
  for (size_t i = 0; i < entries.size(); ++i) out += (i == 0 ? "" : ",") + entries[i];
  return out;
}

// The audit record begun for the write or admin command given (action and target; the
// outcome is added once it ran); nullopt for reads.
std::optional<AuditRecord> audit_begun(const CtlCommandLine& cl) {
  AuditRecord r;
  const RecurCommand& recur = cl.recur;
  if (*cl.schedule.command) {
    r.action = "schedule";
    r.target = *cl.schedule.file ? "file=" + cl.schedule.bulk_file : cl.schedule.options.id;
  } else if (*cl.reschedule.command) {
    r = {"", "", "", "reschedule", cl.reschedule.options.id, ""};
  } else if (*cl.cancel) {
    r.action = "cancel";
    r.target = cl.cancel_range.any() ? range_text(cl.cancel_range) : cl.cancel_id;
  } else if (*cl.run_now) {
    r.action = "run-now";
    r.target = cl.run_now_range.any() ? range_text(cl.run_now_range) : cl.run_now_id;
  } else if (*cl.pause) {
    r.action = "pause";
    if (cl.pause->count("--for") > 0) r.target = "for=" + cl.pause_for;
  } else if (*cl.resume) {
    r.action = "resume";
  } else if (*cl.load) {
    r.action = "load-functions";
  } else if (*cl.check && cl.check_options.repair) {
    r.action = "check --repair";
  } else if (*cl.dead && *cl.dead_purge) {
    r.action = "dead purge";
    r.target = cl.dead_purge->count("--older-than-ms") > 0 ? "older_than_ms=" + std::to_string(cl.older_than_ms)
                                                           : entries_text(cl.dead_purge_options.entries,
                                                                          cl.dead_purge_options.all);
  } else if (*cl.dead && *cl.dead_replay) {
    r.action = "dead replay";
    r.target = entries_text(cl.dead_replay_options.entries, cl.dead_replay_options.all);
  } else if (*recur.command && (*recur.set || *recur.del || *recur.pause || *recur.resume)) {
    r.action = *recur.set ? "recur set" : *recur.del ? "recur delete" : *recur.pause ? "recur pause" : "recur resume";
    r.target = *recur.set ? recur.set_options.id : recur.id;
  } else {
    return std::nullopt;
  }
  return r;
}

void add_dead_commands(CLI::App& app, CtlCommandLine& cl) {
  cl.dead = app.add_subcommand(
      "dead",
      "Dead letters: the entries consumers gave up on (expiry_dead_letter), in NAMESPACE:{B}:dead per bucket,\n"
      "else --dead-stream (default <the relay's stream>:dead, as the consumers default). An entry is named by\n"
      "its stream entry id, or BUCKET/ENTRY-ID with bucket streams, as `dead list` prints it.");
  cl.dead->require_subcommand(1, 1);
  auto dead_stream = [&cl](CLI::App* c) {
    add_global_options(*c, cl.global);
    c->add_option("--dead-stream", cl.dead_stream,
                  "the dead-letter stream of a single-bucket namespace (default: <stream>:dead)");
    add_stream_flag(*c, cl.global, "the relay's stream (default: as for stats), whose STREAM:dead is read");
  };
  cl.dead_list = cl.dead->add_subcommand(
      "list", "List dead letters, oldest first: <entry> <when, ISO-8601 UTC> task=.. reason=.. deliveries=..");
  dead_stream(cl.dead_list);
  cl.dead_list->add_option("--count", cl.dead_list_options.count, "entries to list")
      ->capture_default_str()
      ->check(CLI::Range(1LL, kMaxListCount));
  cl.dead_list->add_flag("--json", cl.dead_list_options.json,
                         "print one JSON object: {\"entries\": [{\"entry\", \"stream\", \"entry_id\", \"when_ms\", \"when\",\n"
                         "\"task_id\", \"reason\", \"deliveries\", \"original_stream\", \"original_id\"}], \"count\", \"more\"}");

  cl.dead_show = cl.dead->add_subcommand("show", "Show every field of one dead letter (exit 3 when it is not there).");
  dead_stream(cl.dead_show);
  cl.dead_show->add_option("entry", cl.dead_show_entry, "the entry, as dead list prints it")->required();
  cl.dead_show->add_flag("--json", cl.dead_show_json, "print one JSON object (fields as tail --json prints them)");

  cl.dead_purge = cl.dead->add_subcommand(
      "purge",
      "Delete dead letters: the ones named (exit 3 if some were already gone), --all (those there when the purge\n"
      "starts), or --older-than-ms MS (dead-lettered more than MS ago), in XDEL batches of at most 500.");
  dead_stream(cl.dead_purge);
  auto* purge_entries = cl.dead_purge->add_option("entry", cl.dead_purge_options.entries, "entries to delete");
  auto* purge_all = cl.dead_purge->add_flag("--all", cl.dead_purge_options.all, "delete every dead letter");
  auto* older = cl.dead_purge->add_option("--older-than-ms", cl.older_than_ms,
                                          "delete those dead-lettered more than this many ms ago (Redis clock)")
                    ->check(CLI::Range(0LL, 253402300799999LL));
  purge_all->excludes(purge_entries)->excludes(older);
  older->excludes(purge_entries);

  cl.dead_replay = cl.dead->add_subcommand(
      "replay",
      "Schedule the task of dead letters again (its id, payload and own stream, as schedule would: a pending task\n"
      "with that id is replaced) and delete the entry, atomically (FCALL expiry_replay_dead): an entry replayed or\n"
      "purged meanwhile is skipped, so it is scheduled once. ENTRY...: exit 3 if some were gone; --all: those there\n"
      "when the replay starts.");
  dead_stream(cl.dead_replay);
  auto* replay_entries = cl.dead_replay->add_option("entry", cl.dead_replay_options.entries, "entries to replay");
  cl.dead_replay->add_flag("--all", cl.dead_replay_options.all, "replay every dead letter")->excludes(replay_entries);
  cl.dead_replay->add_option("--delay-ms", cl.dead_replay_options.delay_ms, "due this many ms from now")
      ->capture_default_str()
      ->check(CLI::Range(0LL, 253402300799999LL));
}

// --cron / --every, --tz, --start, --end of recur set and preview.
void add_rule_flags(CLI::App& command, RecurCommand& r, std::string& tz) {
  auto* cron = command.add_option("--cron", r.cron,
                                  "cron expression: 5 fields (minute hour day-of-month month day-of-week) or 6 with\n"
                                  "seconds first, or @hourly @daily @weekly @monthly @yearly; in --tz");
  cron->type_name("EXPRESSION");
  auto* every = command.add_option("--every", r.every, "interval with a unit: 30s, 15m, 2h ... anchored at --start");
  every->type_name("DURATION");
  cron->excludes(every);
  command.add_flag("--allow-sub-second", r.allow_sub_second,
                   "accept an --every below 1s (each schedule then adds more than one entry a second)");
  command.add_option("--tz", tz, "IANA time zone of the rule (Europe/Berlin ...)")->capture_default_str();
  command.add_option("--start", r.start,
                     "no occurrence before this time: epoch ms, ISO-8601 with Z or an offset, or local time in --tz")
      ->type_name("TIME");
  command.add_option("--end", r.end, "no occurrence after this time (same forms)")->type_name("TIME");
}

void add_recur_commands(CLI::App& app, CtlCommandLine& cl) {
  RecurCommand& r = cl.recur;
  r.command = app.add_subcommand(
      "recur",
      "Recurring schedules: cron or interval rules in any time zone (DST as Vixie cron: a fixed-time job fires\n"
      "once per local day, at the first instant after a spring-forward gap, at the first of a repeated time;\n"
      "others follow real time). Each occurrence is forwarded exactly once, as an entry with the schedule's id,\n"
      "occurrence_ms and occurrence_local (docs/protocol.md).");
  r.command->require_subcommand(1);
  r.set = r.command->add_subcommand("set", "Create or atomically replace a recurring schedule.");
  add_global_options(*r.set, cl.global);
  r.set->add_option("id", r.set_options.id, "schedule id: 1..200 bytes of UTF-8, no control characters")->required();
  add_rule_flags(*r.set, r, r.set_options.write.rule.tz);
  r.set->add_option("--payload", r.set_options.write.payload, "payload of every occurrence");
  r.set->add_option("--stream", r.set_options.write.stream, "stream to deliver to (default: the relay's)");
  r.set->add_option("--webhook", r.set_options.write.webhook, "expiry-webhook endpoint name (docs/webhooks.md)");
  r.set->add_option("--misfire", r.set_options.write.misfire,
                    "occurrences missed by more than the grace (every relay down, a pause): skip them, fire\n"
                    "once (the latest) now, or all (at most --misfire-max in a row)")
      ->type_name("skip|once|all")
      ->capture_default_str();
  r.set->add_option("--misfire-grace-ms", r.set_options.write.misfire_grace_ms,
                    "an occurrence claimed later than this after its time is missed")
      ->capture_default_str()
      ->check(CLI::Range(0LL, 86400000LL));
  r.set->add_option("--misfire-max", r.set_options.write.misfire_max, "with --misfire all: catch-ups fired in a row at most")
      ->capture_default_str()
      ->check(CLI::Range(1LL, 100000LL));
  r.set->add_option("--max-late-ms", r.max_late_ms,
                    "lateness limit per occurrence: later goes to the dead letters (reason late); 0: the relay's");
  r.show = r.command->add_subcommand("show", "Show a recurring schedule and its next 5 occurrences (exit 3: none).");
  add_global_options(*r.show, cl.global);
  r.show->add_option("id", r.id, "schedule id")->required();
  r.show->add_flag("--json", r.json, "print one JSON object");
  r.list = r.command->add_subcommand("list", "List every recurring schedule with its next occurrence.");
  add_global_options(*r.list, cl.global);
  r.list->add_flag("--json", r.json, "print one JSON array");
  r.del = r.command->add_subcommand("delete", "Delete a recurring schedule and its pending occurrence (exit 3: none).");
  add_global_options(*r.del, cl.global);
  r.del->add_option("id", r.id, "schedule id")->required();
  r.pause = r.command->add_subcommand("pause", "Pause a recurring schedule: nothing fires until resume.");
  add_global_options(*r.pause, cl.global);
  r.pause->add_option("id", r.id, "schedule id")->required();
  r.resume = r.command->add_subcommand(
      "resume", "Resume a paused schedule with its next occurrence from now (those in the pause are not fired).");
  add_global_options(*r.resume, cl.global);
  r.resume->add_option("id", r.id, "schedule id")->required();
  r.preview = r.command->add_subcommand(
      "preview", "Print the next occurrences of a rule, one per line: <UTC ISO-8601> <local ISO-8601>. Offline.");
  add_rule_flags(*r.preview, r, r.preview_options.rule.tz);
  r.preview->add_option("--from", r.from, "occurrences after this time (default: now; same forms as --start)")
      ->type_name("TIME");
  r.preview->add_option("--count", r.preview_options.count, "how many")->capture_default_str();
  r.preview->add_flag("--json", r.preview_options.json, "print {\"occurrences\": [{\"utc_ms\", \"utc\", \"local\"}]}");
}

// Moves the shared flag values of `recur` into the options of the subcommand given.
void fill_rule_flags(CLI::App& command, RecurCommand& r, RecurRuleSpec& flags) {
  if (command.count("--cron") > 0) flags.cron = r.cron;
  if (command.count("--every") > 0) flags.every = r.every;
  if (command.count("--start") > 0) flags.start = r.start;
  if (command.count("--end") > 0) flags.end = r.end;
  flags.allow_sub_second = r.allow_sub_second;
}

int run_recur_command(const CtlTarget& target, RecurCommand& r) {
  if (*r.set) {
    fill_rule_flags(*r.set, r, r.set_options.write.rule);
    if (r.set->count("--max-late-ms") > 0) r.set_options.write.max_late_ms = r.max_late_ms;
    return run_recur_set(target, r.set_options);
  }
  if (*r.show) return run_recur_show(target, r.id, r.json);
  if (*r.list) return run_recur_list(target, r.json);
  if (*r.del) return run_recur_delete(target, r.id);
  if (*r.pause) return run_recur_pause(target, r.id);
  return run_recur_resume(target, r.id);
}

int run_dead_command(const CtlTarget& target, CtlCommandLine& cl) {
  if (*cl.dead_list) {
    cl.dead_list_options.dead_stream = cl.dead_stream;
    return run_dead_list(target, cl.dead_list_options);
  }
  if (*cl.dead_show) return run_dead_show(target, cl.dead_show_entry, cl.dead_show_json, cl.dead_stream);
  if (*cl.dead_purge) {
    cl.dead_purge_options.dead_stream = cl.dead_stream;
    if (cl.dead_purge->count("--older-than-ms") > 0) cl.dead_purge_options.older_than_ms = cl.older_than_ms;
    return run_dead_purge(target, cl.dead_purge_options);
  }
  cl.dead_replay_options.dead_stream = cl.dead_stream;
  return run_dead_replay(target, cl.dead_replay_options);
}

int run_schedule_command(const CtlTarget& target, ScheduleCommand& s) {
  // Through Sentinel, writes are confirmed on the replicas the sentinels report unless the user
  // said how many (0: not at all).
  if (s.wait_replicas->count() == 0 && target.redis.sentinel.enabled()) s.options.wait.automatic = true;
  if (*s.file) return run_bulk_schedule(target, s.bulk_file, s.options.wait);
  if (!*s.id) throw ConfigError("schedule needs a task id, or --file");
  if (*s.delay) s.options.delay_ms = s.delay_ms;
  if (*s.at) s.options.at_ms = s.at_ms;
  if (*s.payload) s.options.payload = s.payload_text;
  if (*s.stream) s.options.stream = s.stream_name;
  if (*s.debounce) s.options.task.debounce_max_ms = s.debounce_max_ms;
  if (*s.max_late) s.options.task.max_late_ms = s.max_late_ms;
  if (*s.trace) s.options.task.traceparent = s.traceparent;
  if (*s.webhook_flag) s.options.task.webhook = s.webhook;
  return run_schedule(target, s.options);
}

int run_reschedule_command(const CtlTarget& target, RescheduleCommand& r) {
  if (*r.delay) r.options.delay_ms = r.delay_ms;
  if (*r.at) r.options.at_ms = r.at_ms;
  return run_reschedule(target, r.options);
}

// Runs the subcommand given; throws ConfigError for usage errors, anything else for Redis errors.
int run_command(CtlCommandLine& cl) {
  if (cl.recur.preview != nullptr && *cl.recur.preview) {  // offline: no target
    fill_rule_flags(*cl.recur.preview, cl.recur, cl.recur.preview_options.rule);
    if (cl.recur.preview->count("--from") > 0) cl.recur.preview_options.from = cl.recur.from;
    return run_recur_preview(cl.recur.preview_options);
  }
  const CtlTarget target = resolve_target(cl.global, process_env());
  if (*cl.recur.command) return run_recur_command(target, cl.recur);
  if (*cl.schedule.command) return run_schedule_command(target, cl.schedule);
  if (*cl.reschedule.command) return run_reschedule_command(target, cl.reschedule);
  if (*cl.cancel) {
    if (cl.cancel_range.any()) return run_cancel_range(target, cl.cancel_range.range());
    if (!*cl.cancel_id_option) throw ConfigError("cancel needs a task id, or --prefix / --due-before / --due-after");
    return run_cancel(target, cl.cancel_id, cl.strict);
  }
  if (*cl.run_now) {
    if (cl.run_now_range.any()) return run_run_now_range(target, cl.run_now_range.range());
    if (!*cl.run_now_id_option) throw ConfigError("run-now needs a task id, or --due-before / --prefix");
    return run_run_now(target, cl.run_now_id);
  }
  if (*cl.pause) {
    long long for_ms = 0;
    if (cl.pause->count("--for") > 0) {
      const auto ms = parse_duration_ms(cl.pause_for);
      if (!ms) {
        throw ConfigError("--for must be a positive duration: milliseconds, or with a unit ms, s, m or h (30s, 5m), "
                          "at most 10 years; got '" + escape_text(cl.pause_for) + "'");
      }
      for_ms = *ms;
    }
    return run_pause(target, for_ms);
  }
  if (*cl.resume) return run_resume(target);
  if (*cl.show) return run_show(target, cl.show_id, cl.show_json);
  if (*cl.stats) return run_stats(target, cl.stats_options);
  if (*cl.load) return run_load_functions(target);
  if (*cl.check) return run_check(target, cl.check_options);
  if (*cl.tail) return run_tail(target, cl.tail_options);
  if (*cl.dead) return run_dead_command(target, cl);
  if (*cl.audit) return run_audit(target, cl.audit_query, cl.audit_json);
  if (*cl.list) {
    if (!cl.due_before.empty() || cl.list->count("--due-before") > 0) cl.list_options.due_before = cl.due_before;
    return run_list(target, cl.list_options);
  }
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"expiry-ctl: schedules, cancels and inspects expiry-relay tasks.\n"
               "The connection options work on every command, and can also be set as EXPIRY_RELAY_REDIS_URL,\n"
               "EXPIRY_RELAY_PASSWORD_FILE, EXPIRY_RELAY_NAMESPACE or in the --config JSON file (the relay's\n"
               "config file works: its other keys are ignored). Precedence: flag > env > file > default.\n"
               "The relay's stream and group are read the same way (EXPIRY_RELAY_STREAM, EXPIRY_RELAY_GROUP, keys\n"
               "\"stream\" and \"group\"; defaults NAMESPACE:stream and workers): stats and tail use them unless\n"
               "given --stream / --group, and show names the task's stream or this default.\n"
               "Exit codes: 0 ok, 1 Redis or connection error (check: orphans found and not deleted),\n"
               "2 usage or input error, a wrong or missing password (nothing was written), 3 task not pending (show, reschedule,\n"
               "cancel --strict, run-now ID), 4 schedule --wait-replicas: fewer replicas acknowledged the writes, 130 / 143\n"
               "schedule --file stopped by SIGINT (Ctrl-C) / SIGTERM (it prints how many tasks were written; the\n"
               "others were not). schedule --if-absent that keeps a pending task exits 0 and prints 'kept'.\n"
               "On a Redis Cluster (found out from the server: INFO cluster) --redis-url may name any node, and\n"
               "every command follows the slot map. A namespace's bucket count is read from NAMESPACE:buckets\n"
               "(written when absent on a cluster, 64 by default); a task belongs to bucket CRC16(id) mod the\n"
               "count, and a --buckets that contradicts the stored count is refused (exit 2).",
               "expiry-ctl"};
  app.require_subcommand(0, 1);
  CtlCommandLine cl;
  add_global_options(app, cl.global);
  add_schedule_command(app, cl);
  add_reschedule_command(app, cl);
  add_task_commands(app, cl);
  add_stats_command(app, cl);
  add_check_command(app, cl);
  add_tail_command(app, cl);
  add_list_command(app, cl);
  add_dead_commands(app, cl);
  add_recur_commands(app, cl);
  add_audit_command(app, cl);
  add_version_flag(app, "expiry-ctl");
  if (auto code = parse_command_line(app, argc, argv, "expiry-ctl")) return *code;
  if (app.get_subcommands().empty()) {
    std::cerr << "expiry-ctl: a command is required\n\n" << app.help();
    return kExitUsage;
  }

  std::signal(SIGPIPE, SIG_IGN);
  std::optional<AuditRecord> audit = audit_begun(cl);
  int code = kExitOk;
  std::string error;
  try {
    code = run_command(cl);
  } catch (const ConfigError& e) {
    error = escape_text(e.what());
    std::cerr << "expiry-ctl: " << error << "\n";
    code = kExitUsage;
  } catch (const std::exception& e) {
    error = escape_text(e.what());
    std::cerr << "expiry-ctl: " << error << "\n";
    code = kExitRedisError;
  }
  // A usage error wrote nothing (and may not name a reachable Redis): only what ran is recorded.
  if (audit && code != kExitUsage) {
    audit->outcome = "exit " + std::to_string(code) + (error.empty() ? "" : ": " + error);
    try {
      append_ctl_audit(resolve_target(cl.global, process_env()), std::move(*audit));
    } catch (const std::exception&) {  // the target resolved once already: nothing new to say
    }
  }
  return code;
}
