// ClusterClient: see cluster_client.h for the contracts; the routing decisions themselves are
// in redis/cluster_routing.h.
#include "io/sync/cluster_client.h"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <thread>

#include "base/errors.h"
#include "functions/function_library.h"
#include "redis/cluster_routing.h"
#include "redis/hash_slot.h"

namespace expiry {
namespace {

void check_slot(int slot) {
  if (slot < 0 || slot >= kClusterSlots) throw std::invalid_argument("hash slot out of range: " + std::to_string(slot));
}

// The command on `c`, preceded by ASKING when `asking`; with `library`, a missing library is
// loaded and the call sent once more. Throws what SyncConnection throws.
Reply call(SyncConnection& c, const std::vector<std::string>& argv, bool asking,
           const SyncConnection::FunctionLibrary* library) {
  auto send = [&] {
    if (!asking) return c.command(argv);
    c.append({"ASKING"});
    c.append(argv);
    Reply ok = c.read_reply();
    Reply r = c.read_reply();
    return ok.failed() ? ok : r;
  };
  Reply r = send();
  if (library != nullptr && is_function_missing(r)) {
    c.load_library(*library);
    r = send();
  }
  return r;
}

}  // namespace

ClusterClient::ClusterClient(const RedisEndpoint& seed) : ClusterClient(seed, Options{}) {}

ClusterClient::ClusterClient(const RedisEndpoint& seed, Options options) : seed_(seed), options_(options) {
  seed_.db = 0;
  refresh();
}

ClusterClient::~ClusterClient() = default;

bool ClusterClient::is_cluster(SyncConnection& connection) {
  const Reply info = connection.checked({"INFO", "cluster"});
  return info.str.find("cluster_enabled:1") != std::string::npos;
}

SyncConnection& ClusterClient::connection(const NodeAddress& address) {
  Node& node = nodes_[address];
  if (!node.connection) {
    RedisEndpoint endpoint = seed_;
    endpoint.host = address.host;
    endpoint.port = address.port;
    node.connection = std::make_unique<SyncConnection>(endpoint, options_.connection);
  }
  return *node.connection;
}

void ClusterClient::drop(const NodeAddress& address) {
  auto it = nodes_.find(address);
  if (it == nodes_.end()) return;
  it->second.connection.reset();
  if (it->second.written) it->second.written_lost = true;
  it->second.written = false;
}

void ClusterClient::refresh() {
  std::vector<NodeAddress> candidates = map_.primaries();
  candidates.push_back(NodeAddress{seed_.host, seed_.port});
  for (const auto& range : map_.ranges()) {
    candidates.insert(candidates.end(), range.replicas.begin(), range.replicas.end());
  }
  std::vector<NodeAddress> tried;
  std::optional<SlotMap> partial;
  std::string io_failure;
  std::string refusal;
  for (const auto& address : candidates) {
    if (std::find(tried.begin(), tried.end(), address) != tried.end()) continue;
    tried.push_back(address);
    try {
      const Reply reply = connection(address).command({"CLUSTER", "SLOTS"});
      if (reply.failed()) {
        refusal = address.to_string() + ": CLUSTER SLOTS: " + reply.str;
        continue;
      }
      std::string error;
      auto map = SlotMap::from_cluster_slots(reply, address.host, &error);
      if (!map) {
        refusal = address.to_string() + ": " + error;
        continue;
      }
      if (map->complete()) {
        map_ = std::move(*map);
        return;
      }
      if (!partial) partial = std::move(map);
    } catch (const IoError& e) {
      drop(address);
      io_failure = e.what();
    }
  }
  if (partial) {
    map_ = std::move(*partial);
    return;
  }
  if (!refusal.empty()) throw ReplyError(refusal);
  throw IoError("no Redis Cluster node answers CLUSTER SLOTS (last: " + io_failure + ")");
}

bool ClusterClient::refresh_quietly() {
  try {
    refresh();
    return true;
  } catch (const Error&) {
    return false;  // failed, ignored: the caller retries on the old map
  }
}

void ClusterClient::pause(uint32_t attempt) {
  static thread_local std::mt19937 rng{std::random_device{}()};
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::this_thread::sleep_for(backoff_delay(options_.backoff, attempt, unit(rng)));
}

Reply ClusterClient::execute(const std::vector<std::string>& argv, int slot,
                             const SyncConnection::FunctionLibrary* library, Clock::time_point deadline) {
  check_slot(slot);
  std::optional<NodeAddress> target;
  bool asking = false;
  uint32_t waits = 0;
  int moves = 0;
  for (;;) {
    if (!target) {
      const NodeAddress* owner = map_.primary_of(slot);
      if (owner == nullptr && refresh_quietly()) owner = map_.primary_of(slot);
      if (owner == nullptr) {
        if (Clock::now() >= deadline) throw IoError("no Redis Cluster node serves slot " + std::to_string(slot));
        pause(waits++);
        continue;
      }
      target = *owner;
    }
    Reply reply;
    bool sent = false;
    try {
      SyncConnection& c = connection(*target);
      sent = true;
      reply = call(c, argv, asking, library);
    } catch (const IoError& e) {
      if (sent) nodes_[*target].written = true;  // it may have run there
      drop(*target);
      reply = Reply::io_error(e.what());
    }
    const ClusterVerdict verdict = cluster_verdict(reply);
    if (verdict.step == ClusterStep::Done) {
      nodes_[*target].written = true;
      return reply;
    }
    if (Clock::now() >= deadline) {
      if (reply.is_io_error()) throw IoError(reply.str);
      return reply;
    }
    asking = false;
    switch (verdict.step) {
      case ClusterStep::FollowMoved:
        if (++moves > 1) pause(waits++);  // nodes that disagree must not make us spin
        refresh_quietly();
        target = verdict.redirect->to;
        break;
      case ClusterStep::FollowAsk:
        target = verdict.redirect->to;
        asking = true;
        break;
      case ClusterStep::Retry:
        pause(waits++);
        target.reset();
        break;
      case ClusterStep::RefreshAndRetry:
        pause(waits++);
        refresh_quietly();
        target.reset();
        break;
      case ClusterStep::Done:
        break;
    }
  }
}

Reply ClusterClient::command(const std::vector<std::string>& argv, int slot) {
  return execute(argv, slot, nullptr, Clock::now() + options_.retry_deadline);
}

Reply ClusterClient::fcall(const std::vector<std::string>& argv, int slot) {
  return fcall(argv, slot, SyncConnection::expiry_library());
}

Reply ClusterClient::fcall(const std::vector<std::string>& argv, int slot,
                           const SyncConnection::FunctionLibrary& library) {
  return execute(argv, slot, &library, Clock::now() + options_.retry_deadline);
}

std::vector<Reply> ClusterClient::batch(const std::vector<Routed>& commands) { return run_batch(commands, nullptr); }

std::vector<Reply> ClusterClient::batch(const std::vector<Routed>& commands,
                                        const SyncConnection::FunctionLibrary& library) {
  return run_batch(commands, &library);
}

std::vector<Reply> ClusterClient::run_batch(const std::vector<Routed>& commands,
                                            const SyncConnection::FunctionLibrary* library) {
  std::vector<int> slots;
  slots.reserve(commands.size());
  for (const auto& c : commands) {
    check_slot(c.slot);
    if (c.argv.empty()) throw std::invalid_argument("empty Redis command");
    slots.push_back(c.slot);
  }
  if (map_.ranges().empty()) refresh_quietly();
  NodeGroups groups = group_by_node(slots, map_);

  struct Lane {
    NodeAddress address;
    std::vector<size_t> indexes;
    size_t next = 0;       // first index (into `indexes`) not yet read
    size_t in_flight = 0;  // sent from `next` on, not yet read
  };
  std::vector<Lane> lanes;
  for (auto& [address, indexes] : groups.by_node) lanes.push_back(Lane{address, std::move(indexes)});

  std::vector<Reply> out(commands.size());
  std::vector<size_t> resend = std::move(groups.unrouted);
  bool moved = false;
  const size_t window = std::max<size_t>(options_.window, 1);
  auto abandon = [&](Lane& lane) {  // the rest of the lane is resent one by one
    if (lane.in_flight > 0) nodes_[lane.address].written = true;  // they may have run there
    drop(lane.address);
    resend.insert(resend.end(), lane.indexes.begin() + static_cast<std::ptrdiff_t>(lane.next), lane.indexes.end());
    lane.next = lane.indexes.size();
    lane.in_flight = 0;
  };
  for (;;) {
    bool sent = false;
    for (Lane& lane : lanes) {
      if (lane.next >= lane.indexes.size()) continue;
      try {
        SyncConnection& c = connection(lane.address);
        const size_t end = std::min(lane.next + window, lane.indexes.size());
        for (size_t k = lane.next; k < end; ++k) c.append(commands[lane.indexes[k]].argv);
        c.flush();
        lane.in_flight = end - lane.next;
        sent = true;
      } catch (const IoError&) {
        abandon(lane);
      }
    }
    if (!sent) break;
    for (Lane& lane : lanes) {
      if (lane.in_flight == 0) continue;
      try {
        SyncConnection& c = *nodes_[lane.address].connection;
        for (; lane.in_flight > 0; --lane.in_flight, ++lane.next) {
          const size_t i = lane.indexes[lane.next];
          Reply reply = c.read_reply();
          const ClusterVerdict verdict = cluster_verdict(reply);
          if (verdict.step != ClusterStep::Done || (library != nullptr && is_function_missing(reply))) {
            moved = moved || verdict.step == ClusterStep::FollowMoved;
            resend.push_back(i);
          } else {
            nodes_[lane.address].written = true;
            out[i] = std::move(reply);
          }
        }
      } catch (const IoError&) {
        abandon(lane);
      }
    }
  }
  if (resend.empty()) return out;

  std::sort(resend.begin(), resend.end());
  if (moved) refresh_quietly();
  const auto deadline = Clock::now() + options_.retry_deadline;
  for (size_t i : resend) {
    try {
      out[i] = execute(commands[i].argv, commands[i].slot, library, deadline);
    } catch (const IoError& e) {
      out[i] = Reply::io_error(e.what());
    }
  }
  return out;
}

void ClusterClient::load_library_everywhere() { load_library_everywhere(SyncConnection::expiry_library()); }

void ClusterClient::load_library_everywhere(const SyncConnection::FunctionLibrary& library) {
  refresh();
  for (const auto& primary : map_.primaries()) {
    try {
      connection(primary).load_library(library);
    } catch (const IoError&) {
      drop(primary);
      throw;
    }
  }
}

long long ClusterClient::wait_replicas(int replicas, std::chrono::milliseconds timeout) {
  long long least = -1;  // -1: no node was written to
  auto count = [&](long long acknowledged) { least = least < 0 ? acknowledged : std::min(least, acknowledged); };
  std::vector<NodeAddress> asked;
  for (auto& [address, node] : nodes_) {
    if (node.written_lost) count(0);
    node.written_lost = false;
    if (!node.written || !node.connection) continue;
    node.written = false;
    try {
      node.connection->append({"WAIT", std::to_string(replicas), std::to_string(timeout.count())});
      node.connection->flush();
      asked.push_back(address);
    } catch (const IoError&) {
      node.connection.reset();
      count(0);
    }
  }
  for (const auto& address : asked) {
    Node& node = nodes_[address];
    try {
      const Reply r = node.connection->read_reply();
      count(r.type == Reply::Type::Integer ? r.integer : 0);
    } catch (const IoError&) {
      node.connection.reset();
      count(0);
    }
  }
  return least < 0 ? replicas : least;
}

std::vector<NodeAddress> ClusterClient::primaries() {
  if (map_.ranges().empty()) refresh();
  return map_.primaries();
}

Reply ClusterClient::command_on(const NodeAddress& node, const std::vector<std::string>& argv) {
  try {
    return connection(node).command(argv);
  } catch (const IoError&) {
    drop(node);
    throw;
  }
}

}  // namespace expiry
