// See task_target.h.
#include "bench/task_target.h"

#include <cstdlib>
#include <thread>

#include "base/errors.h"
#include "bench/redis_probe.h"
#include "bench/run_tally.h"
#include "functions/bucket_plan.h"
#include "functions/stream_entry.h"
#include "redis/hash_slot.h"

namespace expiry::bench {

namespace {

constexpr const char* kRangePage = "10000";  // XRANGE entries per call when reading the streams

double cpu_seconds_of(const std::string& info_text) {
  const auto fields = parse_info(info_text);
  double sum = 0;
  for (const char* name : {"used_cpu_sys", "used_cpu_user"}) {
    const auto it = fields.find(name);
    if (it == fields.end()) throw Error(std::string("INFO cpu has no ") + name);
    sum += std::strtod(it->second.c_str(), nullptr);
  }
  return sum;
}

const SyncConnection::Options kConnectionOptions{std::chrono::milliseconds(2000), std::chrono::seconds(60)};

}  // namespace

TaskTarget::TaskTarget(const BenchContext& ctx, int buckets) : ctx_(ctx) {
  if (const auto error = bucket_count_error(buckets)) throw ConfigError(*error);
  placement_.ns = ctx.keys.ns();
  placement_.buckets = buckets;
  placement_.stream = ctx.stream;
  placement_.db = ctx.redis.db;
}

std::unique_ptr<TaskTarget> TaskTarget::single(const BenchContext& ctx, int buckets) {
  std::unique_ptr<TaskTarget> t(new TaskTarget(ctx, buckets));
  t->single_ = std::make_unique<SyncConnection>(ctx.redis, kConnectionOptions);
  return t;
}

std::unique_ptr<TaskTarget> TaskTarget::cluster(const BenchContext& ctx, const std::string& seed_url, int buckets) {
  std::unique_ptr<TaskTarget> t(new TaskTarget(ctx, buckets));
  t->ctx_.redis_url = seed_url;
  t->ctx_.redis = parse_redis_url(seed_url);
  if (t->ctx_.redis.tls.enabled) t->ctx_.redis.tls = ctx.redis.tls;  // a TLS cluster: the bench's tls_* settings
  {
    SyncConnection probe(t->ctx_.redis, kConnectionOptions);
    if (!ClusterClient::is_cluster(probe)) throw ConfigError(seed_url + " is not a Redis Cluster node");
  }
  ClusterClient::Options options;
  options.connection = kConnectionOptions;
  t->cluster_ = std::make_unique<ClusterClient>(t->ctx_.redis, options);
  t->placement_.cluster = true;
  t->placement_.db = 0;
  return t;
}

ClusterClient::Routed TaskTarget::schedule_command(const std::string& id, ScheduleMode mode, long long ms) const {
  Task task;
  task.id = id;
  task.mode = mode;
  task.ms = ms;
  task.payload = task_payload(id, ctx_.payload_bytes);
  return {placement_.slot_of_task(id), placement_.schedule_argv(task)};
}

Reply TaskTarget::run_one(const std::vector<std::string>& argv, int slot) {
  Reply r = cluster_ ? cluster_->command(argv, slot) : single_->command(argv);
  if (r.is_io_error()) throw IoError(argv.front() + ": " + r.str);
  return r;
}

std::vector<Reply> TaskTarget::run_all(const std::vector<ClusterClient::Routed>& commands) {
  std::vector<Reply> replies;
  if (cluster_) {
    replies = cluster_->batch(commands);
  } else {
    replies.resize(commands.size());
    run_pipelined(
        *single_, commands.size(), ctx_.pipeline_depth, [&](size_t i) { return commands[i].argv; },
        [&](size_t i, const Reply& r) { replies[i] = r; });
  }
  for (const Reply& r : replies) {
    if (r.is_io_error()) throw IoError("batch: " + r.str);
  }
  return replies;
}

void TaskTarget::on_every_primary(const std::vector<std::string>& argv) {
  if (!cluster_) {
    single_->checked(argv);
    return;
  }
  for (const NodeAddress& node : cluster_->primaries()) {
    const Reply r = cluster_->command_on(node, argv);
    if (r.failed()) throw Error(argv.front() + " on " + node.to_string() + ": " + r.str);
  }
}

void TaskTarget::reset() {
  on_every_primary({"FLUSHALL"});
  if (cluster_) {
    cluster_->load_library_everywhere();
  } else {
    single_->load_library();
  }
  const std::string buckets_key = ctx_.keys.buckets_key();
  if (cluster_ || placement_.buckets > 1) {
    const Reply r = run_one({"SET", buckets_key, std::to_string(placement_.buckets)}, key_hash_slot(buckets_key));
    if (r.failed()) throw Error("SET " + buckets_key + ": " + r.str);
  }
  reset_streams();
}

void TaskTarget::reset_streams() {
  const int streams = stream_count();
  std::vector<ClusterClient::Routed> commands;
  for (int b = 0; b < streams; ++b) {
    const std::string stream = placement_.default_stream_of_bucket(b);
    commands.push_back({TaskPlacement::slot_of_bucket(b), {"DEL", stream}});
    commands.push_back({TaskPlacement::slot_of_bucket(b), {"XGROUP", "CREATE", stream, ctx_.group, "0", "MKSTREAM"}});
  }
  for (const Reply& r : run_all(commands)) {
    if (r.failed()) throw Error("resetting the streams: " + r.str);
  }
}

ScheduleResult TaskTarget::schedule_one(const std::string& id, ScheduleMode mode, long long ms) {
  const ClusterClient::Routed call = schedule_command(id, mode, ms);
  const Reply r = run_one(call.argv, call.slot);
  const auto result = decode_schedule(r);
  if (!result) throw Error("FCALL expiry_schedule " + id + ": " + r.describe());
  return *result;
}

ScheduleOutcome TaskTarget::schedule_many(const std::string& prefix, size_t n,
                                          const std::function<TaskDue(size_t)>& due_of) {
  const auto start = std::chrono::steady_clock::now();
  ScheduleOutcome out;
  out.min_due_ms = -1;
  constexpr size_t kChunk = 20000;  // tasks built and sent per batch, to bound memory
  for (size_t first = 0; first < n; first += kChunk) {
    const size_t last = std::min(n, first + kChunk);
    std::vector<ClusterClient::Routed> commands;
    commands.reserve(last - first);
    for (size_t i = first; i < last; ++i) {
      const std::string id = task_id(prefix, i);
      const TaskDue due = due_of(i);
      commands.push_back(schedule_command(id, due.mode, due.ms));
    }
    const std::vector<Reply> replies = run_all(commands);
    for (size_t k = 0; k < replies.size(); ++k) {
      const auto result = decode_schedule(replies[k]);
      if (!result) throw Error("FCALL expiry_schedule rejected " + task_id(prefix, first + k) + ": " + replies[k].describe());
      out.max_due_ms = std::max(out.max_due_ms, result->due_ms);
      if (out.min_due_ms < 0 || result->due_ms < out.min_due_ms) out.min_due_ms = result->due_ms;
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

long long TaskTarget::stream_length() {
  const int streams = stream_count();
  std::vector<ClusterClient::Routed> commands;
  for (int b = 0; b < streams; ++b) {
    commands.push_back({TaskPlacement::slot_of_bucket(b), {"XLEN", placement_.default_stream_of_bucket(b)}});
  }
  long long sum = 0;
  for (const Reply& r : run_all(commands)) {
    if (r.failed()) throw Error("XLEN: " + r.str);
    sum += r.integer;
  }
  return sum;
}

std::vector<ReceivedEntry> TaskTarget::read_streams() {
  std::vector<ReceivedEntry> out;
  const int streams = stream_count();
  for (int b = 0; b < streams; ++b) {
    const std::string stream = placement_.default_stream_of_bucket(b);
    std::string from = "-";
    for (;;) {
      const Reply r = run_one({"XRANGE", stream, from, "+", "COUNT", kRangePage}, TaskPlacement::slot_of_bucket(b));
      if (r.failed()) throw Error("XRANGE " + stream + ": " + r.str);
      const std::vector<StreamEntry> entries = parse_stream_entries(r);
      for (const StreamEntry& e : entries) out.push_back(ReceivedEntry{decode_forwarded_task(e), 0});
      if (entries.empty() || r.elements.size() < std::stoul(kRangePage)) break;
      from = "(" + entries.back().entry_id;
    }
  }
  return out;
}

long long TaskTarget::drain_due() {
  long long forwarded = 0;
  for (int b = 0; b < placement_.buckets; ++b) {
    for (;;) {
      const Reply r = run_one(sweep_argv(KeyLayout(placement_.ns, b), placement_.default_stream_of_bucket(b), 1000,
                                         kDrainVia, ctx_.group),
                              TaskPlacement::slot_of_bucket(b));
      const auto sweep = decode_sweep(r);
      if (!sweep) throw Error("FCALL expiry_sweep: " + r.describe());
      forwarded += sweep->forwarded;
      if (!sweep->more_due() && !sweep->migrating) break;
    }
  }
  return forwarded;
}

RedisCpu TaskTarget::cpu() {
  RedisCpu cpu;
  if (!cluster_) {
    cpu.primaries = cpu_seconds_of(single_->checked({"INFO", "cpu"}).str);
    return cpu;
  }
  auto info_cpu = [&](const NodeAddress& node) {
    const Reply r = cluster_->command_on(node, {"INFO", "cpu"});
    if (r.failed()) throw Error("INFO cpu on " + node.to_string() + ": " + r.str);
    return cpu_seconds_of(r.str);
  };
  for (const NodeAddress& primary : cluster_->primaries()) {
    cpu.primaries += info_cpu(primary);
    for (const NodeAddress& replica : cluster_->slot_map().replicas_of(primary)) cpu.replicas += info_cpu(replica);
  }
  return cpu;
}

std::vector<std::map<std::string, long long>> TaskTarget::calls_per_primary() {
  std::vector<std::map<std::string, long long>> out;
  if (!cluster_) {
    out.push_back(command_calls_in(single_->checked({"INFO", "commandstats"}).str));
    return out;
  }
  for (const NodeAddress& primary : cluster_->primaries()) {
    const Reply r = cluster_->command_on(primary, {"INFO", "commandstats"});
    if (r.failed()) throw Error("INFO commandstats on " + primary.to_string() + ": " + r.str);
    out.push_back(command_calls_in(r.str));
  }
  return out;
}

long long TaskTarget::channels_subscribed(const std::string& pattern) {
  if (!cluster_) return static_cast<long long>(single_->checked({"PUBSUB", "CHANNELS", pattern}).elements.size());
  long long n = 0;
  for (const NodeAddress& primary : cluster_->primaries()) {
    const Reply r = cluster_->command_on(primary, {"PUBSUB", "CHANNELS", pattern});
    if (r.failed()) throw Error("PUBSUB CHANNELS on " + primary.to_string() + ": " + r.str);
    n += static_cast<long long>(r.elements.size());
  }
  return n;
}

void TaskTarget::wait_ready(RelayProcess& relay, std::chrono::milliseconds timeout) {
  if (!cluster_) {
    relay.wait_ready(*single_, timeout);
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::vector<NodeAddress> primaries = cluster_->primaries();
  while (std::chrono::steady_clock::now() < deadline) {
    if (!relay.running()) throw Error("expiry-relay " + relay.instance() + " exited; see " + relay.log_path());
    size_t ready = 0;
    for (const NodeAddress& node : primaries) {
      const std::string instance = relay.instance() + "@" + node.to_string();
      const Reply clients = cluster_->command_on(node, {"CLIENT", "LIST"});
      const Reply numsub = cluster_->command_on(node, {"PUBSUB", "NUMSUB", ctx_.keys.health_channel(instance)});
      const bool commands_up = clients.str.find("name=expiry-relay-cmd-" + instance + " ") != std::string::npos;
      const bool subscribed = numsub.elements.size() == 2 && numsub.elements[1].integer > 0;
      if (commands_up && subscribed) ++ready;
    }
    if (ready == primaries.size()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw Error("expiry-relay " + relay.instance() + " not ready on every primary within " +
              std::to_string(timeout.count()) + " ms; see " + relay.log_path());
}

}  // namespace expiry::bench
