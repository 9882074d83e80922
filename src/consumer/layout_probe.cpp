// See layout_probe.h.
#include "consumer/layout_probe.h"

#include <spdlog/spdlog.h>

#include "io/cluster_topology.h"
#include "protocol/bucket_plan.h"
#include "protocol/key_layout.h"
#include "protocol/redis_error.h"

namespace expiry {

LayoutProbe::LayoutProbe(EventLoop& loop, const ConsumerConfig& config)
    : loop_(loop),
      config_(config),
      switch_timer_(loop,
                    [this] {
                      if (!moved_to_ || finished_) return;
                      old_conn_ = std::move(conn_);
                      old_conn_.reset();
                      connect(*moved_to_);
                    }),
      retry_timer_(loop, [this] {
        if (finished_ || !conn_ || !conn_->ready()) return;
        ask_cluster();
      }),
      finish_timer_(loop, [this] {
        conn_.reset();
        if (finish_fn_) {
          auto fn = std::move(finish_fn_);
          fn();
        }
      }) {}

void LayoutProbe::start(std::function<void(const ConsumerLayout&)> done,
                        std::function<void(const std::string&)> on_fatal) {
  done_ = std::move(done);
  on_fatal_ = std::move(on_fatal);
  connect(NodeAddress{config_.redis.host, config_.redis.port});
}

void LayoutProbe::connect(const NodeAddress& node) {
  RedisConnection::Options o;
  o.endpoint = endpoint_at(config_.redis, node);
  o.role = "setup";
  o.client_name = "expiry-consumer-setup-" + config_.consumer;
  o.connect_timeout = config_.connect_timeout;
  o.watchdog_interval = config_.watchdog_interval;
  o.watchdog_timeout = config_.watchdog_timeout;
  o.backoff = config_.reconnect;
  conn_ = std::make_unique<RedisConnection>(loop_, o);
  conn_->set_on_ready([this] { ask_cluster(); });
  conn_->set_on_handshake_error([this](const Reply& r) {
    const std::string why = "Redis refused the connection handshake: " + r.str;
    finish([this, why] { on_fatal_(why); });
  });
  conn_->start();
}

void LayoutProbe::ask_cluster() {
  if (finished_) return;
  conn_->command({"INFO", "cluster"}, [this](const Reply& r) {
    if (finished_) return;
    const bool no_permission = classify(r) == RedisErrorKind::NoPermission;
    if (r.failed() && !no_permission) {
      if (!r.is_io_error()) retry_later("INFO cluster: " + r.str);
      return;  // an I/O error: on_ready asks again
    }
    if (no_permission) {
      spdlog::info("setup: the ACL user may not run INFO; taking {} for a single Redis", config_.redis.where());
    }
    if (no_permission || r.str.find("cluster_enabled:1") == std::string::npos) {
      finish([this] { done_(ConsumerLayout{false, 1}); });
      return;
    }
    read_buckets();
  });
}

void LayoutProbe::read_buckets() {
  conn_->command({"GET", KeyLayout(config_.ns).buckets_key()}, [this](const Reply& r) { on_buckets(r); });
}

void LayoutProbe::on_buckets(const Reply& r) {
  if (finished_) return;
  if (classify(r) == RedisErrorKind::Moved) {
    if (auto redirect = parse_redirect(r.str)) {
      moved_to_ = redirect->to;
      switch_timer_.arm(std::chrono::microseconds(0));
      return;
    }
  }
  if (r.failed()) {
    if (!r.is_io_error()) retry_later("GET " + KeyLayout(config_.ns).buckets_key() + ": " + r.str);
    return;
  }
  std::optional<std::string> stored;
  if (r.type == Reply::Type::String) stored = r.str;
  std::string error;
  auto plan = plan_buckets(stored, config_.buckets, true, config_.ns, &error);
  if (!plan) {
    finish([this, error] { on_fatal_(error); });
    return;
  }
  if (plan->store && !stored_) {
    stored_ = true;  // SET NX, then read back what won (another program may have stored first)
    conn_->command({"SET", KeyLayout(config_.ns).buckets_key(), std::to_string(plan->buckets), "NX"},
                   [this](const Reply&) { read_buckets(); });
    return;
  }
  const int buckets = plan->buckets;
  finish([this, buckets] { done_(ConsumerLayout{true, buckets}); });
}

void LayoutProbe::retry_later(const std::string& why) {
  spdlog::warn("setup: {}; asking again in 500 ms", why);
  retry_timer_.arm(std::chrono::milliseconds(500));
}

void LayoutProbe::finish(std::function<void()> fn) {
  if (finished_) return;
  finished_ = true;
  finish_fn_ = std::move(fn);
  finish_timer_.arm(std::chrono::microseconds(0));
}

}  // namespace expiry
