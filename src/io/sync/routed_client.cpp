// See routed_client.h.
#include "io/sync/routed_client.h"

#include <algorithm>
#include <optional>

#include "protocol/bucket_plan.h"
#include "protocol/errors.h"
#include "protocol/function_library.h"
#include "protocol/hash_slot.h"
#include "protocol/key_layout.h"
#include "protocol/redis_error.h"

namespace expiry {
namespace {

constexpr size_t kSingleWindow = 512;  // commands in flight per round trip on one Redis

}  // namespace

RoutedClient::RoutedClient(const RedisEndpoint& endpoint) : endpoint_(endpoint) {
  single_ = std::make_unique<SyncConnection>(endpoint);
  const Reply info = single_->command({"INFO", "cluster"});
  if (info.failed() && classify(info) != RedisErrorKind::NoPermission) expect_ok(info, "INFO cluster");
  if (!info.failed() && info.str.find("cluster_enabled:1") != std::string::npos) {
    single_.reset();
    cluster_ = std::make_unique<ClusterClient>(endpoint);
  }
}

RoutedClient::~RoutedClient() = default;

int RoutedClient::agree_buckets(const std::string& ns, int configured) {
  const std::string key = KeyLayout(ns).buckets_key();
  const int slot = key_hash_slot(key);
  const auto stored = [&]() -> std::optional<std::string> {
    const Reply r = command({"GET", key}, slot);
    expect_ok(r, "GET " + key);
    if (r.type == Reply::Type::Nil) return std::nullopt;
    return r.str;
  };
  std::string error;
  auto plan = plan_buckets(stored(), configured, cluster(), ns, &error);
  if (!plan) throw ConfigError(error);
  if (plan->store) {
    expect_ok(command({"SET", key, std::to_string(plan->buckets), "NX"}, slot), "SET " + key);
    plan = plan_buckets(stored(), configured, cluster(), ns, &error);  // the key decides
    if (!plan) throw ConfigError(error);
  }
  return plan->buckets;
}

Reply RoutedClient::command(const std::vector<std::string>& argv, int slot) {
  if (cluster_) return cluster_->command(argv, slot);
  return single_->command(argv);
}

Reply RoutedClient::fcall(const std::vector<std::string>& argv, int slot) {
  return fcall(argv, slot, SyncConnection::expiry_library());
}

Reply RoutedClient::fcall(const std::vector<std::string>& argv, int slot,
                          const SyncConnection::FunctionLibrary& library) {
  if (cluster_) return cluster_->fcall(argv, slot, library);
  return single_->fcall(argv, library);
}

std::vector<Reply> RoutedClient::batch(const std::vector<ClusterClient::Routed>& commands,
                                       const SyncConnection::FunctionLibrary* library) {
  if (cluster_) return library ? cluster_->batch(commands, *library) : cluster_->batch(commands);
  std::vector<Reply> out;
  out.reserve(commands.size());
  for (size_t start = 0; start < commands.size(); start += kSingleWindow) {
    const size_t end = std::min(commands.size(), start + kSingleWindow);
    for (size_t i = start; i < end; ++i) single_->append(commands[i].argv);
    for (size_t i = start; i < end; ++i) out.push_back(single_->read_reply());
  }
  if (library == nullptr) return out;
  bool loaded = false;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!is_function_missing(out[i])) continue;
    if (!loaded) single_->load_library(*library);
    loaded = true;
    out[i] = single_->command(commands[i].argv);
  }
  return out;
}

void RoutedClient::load_library_everywhere(const SyncConnection::FunctionLibrary& library) {
  if (cluster_) {
    cluster_->load_library_everywhere(library);
  } else {
    single_->load_library(library);
  }
}

long long RoutedClient::wait_replicas(int replicas, std::chrono::milliseconds timeout) {
  if (cluster_) return cluster_->wait_replicas(replicas, timeout);
  const Reply r = expect_ok(single_->command({"WAIT", std::to_string(replicas), std::to_string(timeout.count())}),
                            "WAIT");
  if (r.type != Reply::Type::Integer) throw ReplyError("WAIT: unexpected reply " + r.describe());
  return r.integer;
}

std::vector<NodeAddress> RoutedClient::primaries() {
  if (cluster_) return cluster_->primaries();
  return {NodeAddress{endpoint_.host, endpoint_.port}};
}

Reply RoutedClient::command_on(const NodeAddress& node, const std::vector<std::string>& argv) {
  if (cluster_) return cluster_->command_on(node, argv);
  return single_->command(argv);
}

SyncConnection& RoutedClient::single() {
  if (!single_) throw Error("internal: the single-Redis connection of a cluster client was asked for");
  return *single_;
}

}  // namespace expiry
