// The webhook HTTP client: libcurl's multi interface driven by the service's libevent loop
// (CURLMOPT_SOCKETFUNCTION + CURLMOPT_TIMERFUNCTION + curl_multi_socket_action), so many POSTs
// are in flight on one thread. Each request connects only to an address the AddressPolicy
// allows, checked in CURLOPT_OPENSOCKETFUNCTION after DNS resolution (the socket it opens is the
// one the request uses: no second lookup to rebind). No redirects, no proxies, TLS verified,
// at most 4 KiB of a response body read.
//
// Contracts: `done` runs exactly once per post(), from the loop, never from inside post() nor
// from inside a libcurl callback; nothing throws across libcurl or libevent (call_guarded).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "io/event_loop.h"
#include "webhook/address_policy.h"
#include "webhook/delivery_outcome.h"

namespace expiry {

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "name: value"
  std::string body;
  std::chrono::milliseconds timeout{5000};
  std::optional<std::string> ca_file;
};

class HttpClient {
 public:
  using Done = std::function<void(const AttemptResult&)>;
  static constexpr size_t kMaxBodyBytes = 4096;

  // curl_global_init must have run (main does it once).
  HttpClient(EventLoop& loop, AddressPolicy policy);
  ~HttpClient();  // aborts what is in flight without calling `done`
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  void post(HttpRequest request, Done done);
  size_t in_flight() const { return in_flight_; }
  const AddressPolicy& policy() const { return policy_; }

  // libcurl's CURLOPT_OPENSOCKETFUNCTION (typed loosely to keep curl.h out of this header):
  // a socket for an allowed address, CURL_SOCKET_BAD (recording why) for a refused one.
  static int open_socket(void* transfer, int purpose, void* address) noexcept;

 private:
  struct Transfer;
  struct Watch;
  static int on_socket(void* easy, int fd, int what, void* self, void* watch);
  static int on_timer(void* multi, long timeout_ms, void* self);
  static void on_event(int fd, short events, void* watch);
  void socket_action(int fd, int events);
  void collect_finished();
  void finish(Transfer* t, int code);

  EventLoop& loop_;
  AddressPolicy policy_;
  void* multi_;  // CURLM*, owned
  Timer timer_;  // libcurl's timeout
  size_t in_flight_ = 0;
  std::unordered_set<Transfer*> transfers_;  // owned: added to the multi handle, not yet finished
  AliveToken alive_;
};

}  // namespace expiry
