// See layout_probe.h.
#include "io/layout_probe.h"

#include <spdlog/spdlog.h>

#include "functions/bucket_plan.h"
#include "functions/key_layout.h"
#include "io/cluster_topology.h"
#include "redis/handshake_refusal.h"
#include "redis/redis_error.h"

namespace expiry {

LayoutProbe::LayoutProbe(EventLoop& loop, Options options)
    : loop_(loop),
      options_(std::move(options)),
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

void LayoutProbe::start(std::function<void(const RedisLayout&)> done,
                        std::function<void(const std::string&)> on_fatal) {
  done_ = std::move(done);
  on_fatal_ = std::move(on_fatal);
  connect(NodeAddress{options_.redis.host, options_.redis.port});
}

void LayoutProbe::connect(const NodeAddress& node) {
  RedisConnection::Options o;
  o.endpoint = endpoint_at(options_.redis, node);
  o.role = "setup";
  o.client_name = options_.client_name;
  o.connect_timeout = options_.connect_timeout;
  o.watchdog_interval = options_.watchdog_interval;
  o.watchdog_timeout = options_.watchdog_timeout;
  o.backoff = options_.backoff;
  conn_ = std::make_unique<RedisConnection>(loop_, o);
  conn_->set_on_ready([this] { ask_cluster(); });
  conn_->set_on_handshake_error([this](const Reply& r) {
    const std::string why = handshake_refusal_message(options_.redis.where(), r);
    conn_->close();  // no retry (or its log line) after a refusal retrying cannot cure
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
      spdlog::info("setup: the ACL user may not run INFO; taking {} for a single Redis", options_.redis.where());
    }
    cluster_ = !no_permission && r.str.find("cluster_enabled:1") != std::string::npos;
    read_buckets();
  });
}

void LayoutProbe::read_buckets() {
  conn_->command({"GET", KeyLayout(options_.ns).buckets_key()}, [this](const Reply& r) { on_buckets(r); });
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
  if (r.failed() && !cluster_ && classify(r) == RedisErrorKind::NoPermission) {
    // On one Redis a user without read access to NS:buckets (a minimal consumer's) works with
    // the setting, else one bucket, as before buckets existed.
    const int buckets = options_.buckets > 0 ? options_.buckets : 1;
    finish([this, buckets] { done_(RedisLayout{false, buckets}); });
    return;
  }
  if (r.failed()) {
    if (!r.is_io_error()) retry_later("GET " + KeyLayout(options_.ns).buckets_key() + ": " + r.str);
    return;
  }
  std::optional<std::string> stored;
  if (r.type == Reply::Type::String) stored = r.str;
  std::string error;
  auto plan = plan_buckets(stored, options_.buckets, cluster_, options_.ns, &error);
  if (!plan) {
    finish([this, error] { on_fatal_(error); });
    return;
  }
  if (plan->store && !stored_) {
    stored_ = true;  // SET NX, then read back what won (another program may have stored first)
    conn_->command({"SET", KeyLayout(options_.ns).buckets_key(), std::to_string(plan->buckets), "NX"},
                   [this](const Reply&) { read_buckets(); });
    return;
  }
  const int buckets = plan->buckets;
  const bool cluster = cluster_;
  finish([this, cluster, buckets] { done_(RedisLayout{cluster, buckets}); });
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
