// See startup_probe.h.
#include "relay/startup_probe.h"

#include <chrono>
#include <memory>

#include "io/sync/cluster_client.h"
#include "io/sync/sync_connection.h"
#include "protocol/bucket_plan.h"
#include "protocol/errors.h"
#include "protocol/hash_slot.h"
#include "protocol/key_layout.h"
#include "protocol/redis_error.h"

namespace expiry {

namespace {

std::optional<std::string> value_of(const Reply& reply, const std::string& key) {
  if (reply.failed()) throw IoError("GET " + key + ": " + reply.str);
  if (reply.type == Reply::Type::Nil) return std::nullopt;
  return reply.str;
}

}  // namespace

std::optional<StartupFacts> probe_redis(const RelayConfig& config, std::string* unreachable) {
  const KeyLayout keys(config.ns);
  // INFO and GET answer at once: a server that does not is hung, and the relay starts without
  // these facts rather than wait (its connect-time checks read them again).
  const SyncConnection::Options quick{config.connect_timeout, config.connect_timeout};
  StartupFacts facts;
  try {
    // One connection for the whole probe (through Sentinel, one lookup).
    SyncConnection connection(config.redis, quick);
    {
      const Reply info = connection.command({"INFO", "cluster"});
      if (info.failed() && is_auth_refusal(classify(info))) {
        throw AuthError("Redis refuses the relay at " + connection.endpoint().redacted() + ": " + info.str +
                        " (set the password in redis_url or password_file)");
      }
      facts.cluster = !info.failed() && info.str.find("cluster_enabled:1") != std::string::npos;
    }
    // On a cluster the key lives on the primary of its slot: the router follows MOVED and ASK.
    std::unique_ptr<ClusterClient> cluster;
    if (facts.cluster) {
      ClusterClient::Options options;
      options.connection = quick;
      cluster = std::make_unique<ClusterClient>(config.redis, options);
    }
    const int slot = key_hash_slot(keys.buckets_key());
    const auto run = [&](const std::vector<std::string>& argv) {
      return cluster ? cluster->command(argv, slot) : connection.command(argv);
    };
    const auto get = [&] { return value_of(run({"GET", keys.buckets_key()}), keys.buckets_key()); };
    std::string error;
    auto plan = plan_buckets(get(), config.buckets, facts.cluster, config.ns, &error);
    if (!plan) throw ConfigError(error);
    if (plan->store) {
      const std::vector<std::string> set{"SET", keys.buckets_key(), std::to_string(plan->buckets), "NX"};
      const Reply stored = run(set);
      if (stored.failed()) throw IoError("SET " + keys.buckets_key() + ": " + stored.str);
      // Another program may have written another count first: the key decides.
      plan = plan_buckets(get(), config.buckets, facts.cluster, config.ns, &error);
      if (!plan) throw ConfigError(error);
    }
    facts.bucket_count = plan->buckets;
    return facts;
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    if (unreachable) *unreachable = e.what();
    return std::nullopt;
  }
}

}  // namespace expiry
