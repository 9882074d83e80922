// See http_client.h.
#include "webhook/http_client.h"

#include <curl/curl.h>
#include <event2/event.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <cstring>
#include <strings.h>

#include "io/callback_barrier.h"

namespace expiry {

// One request: its easy handle and what the callbacks gather.
struct HttpClient::Transfer {
  HttpClient* client = nullptr;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  Done done;
  AttemptResult result;
  std::string refusal;  // the address policy's reason, when it refused a socket
  bool opened = false;  // some address was allowed and a socket opened for it
  char error[CURL_ERROR_SIZE] = {0};

  ~Transfer() {
    if (headers) curl_slist_free_all(headers);
    if (easy) curl_easy_cleanup(easy);
  }
};

// The libevent event of one socket libcurl watches.
struct HttpClient::Watch {
  HttpClient* client = nullptr;
  event* ev = nullptr;
  ~Watch() {
    if (ev) event_free(ev);
  }
};

namespace {

size_t on_body(char* data, size_t size, size_t count, void* user) noexcept {
  auto* result = static_cast<AttemptResult*>(user);
  const size_t n = size * count;
  const size_t room = HttpClient::kMaxBodyBytes - std::min(result->body.size(), HttpClient::kMaxBodyBytes);
  try {
    result->body.append(data, std::min(n, room));
  } catch (...) {
    return 0;
  }
  return n <= room ? n : 0;  // beyond 4 KiB: stop reading (CURLE_WRITE_ERROR, the status is kept)
}

size_t on_header(char* data, size_t size, size_t count, void* user) noexcept {
  auto* result = static_cast<AttemptResult*>(user);
  const size_t n = size * count;
  static constexpr char kName[] = "retry-after:";
  if (n > sizeof kName - 1 && strncasecmp(data, kName, sizeof kName - 1) == 0) {
    try {
      result->retry_after.assign(data + sizeof kName - 1, n - (sizeof kName - 1));
    } catch (...) {
    }
  }
  return n;
}

}  // namespace

// Opens the socket of one connection attempt, if the policy allows its address.
int HttpClient::open_socket(void* transfer, int purpose, void* address) noexcept {
  auto* t = static_cast<Transfer*>(transfer);
  auto* a = static_cast<curl_sockaddr*>(address);
  curl_socket_t fd = CURL_SOCKET_BAD;
  call_guarded("webhook opensocket", [&] {
    if (purpose != CURLSOCKTYPE_IPCXN) return;
    const auto ip = ip_of(&a->addr);
    if (!ip) {
      t->refusal = "not an IP destination";
      return;
    }
    if (auto why = t->client->policy_.refusal(*ip)) {
      t->refusal = *why;
      return;
    }
    fd = socket(a->family, a->socktype, a->protocol);
    t->opened = t->opened || fd != CURL_SOCKET_BAD;
  });
  return fd;
}

namespace {
curl_socket_t open_socket_trampoline(void* user, curlsocktype purpose, curl_sockaddr* address);
}

HttpClient::HttpClient(EventLoop& loop, AddressPolicy policy)
    : loop_(loop), policy_(std::move(policy)), multi_(curl_multi_init()), timer_(loop, [this] {
        socket_action(CURL_SOCKET_TIMEOUT, 0);
      }) {
  CURLM* m = static_cast<CURLM*>(multi_);
  curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, &HttpClient::on_socket);
  curl_multi_setopt(m, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, &HttpClient::on_timer);
  curl_multi_setopt(m, CURLMOPT_TIMERDATA, this);
}

HttpClient::~HttpClient() {
  CURLM* m = static_cast<CURLM*>(multi_);
  for (Transfer* t : transfers_) {
    curl_multi_remove_handle(m, t->easy);
    delete t;
  }
  transfers_.clear();
  curl_multi_cleanup(m);
}

void HttpClient::post(HttpRequest request, Done done) {
  auto t = std::make_unique<Transfer>();
  t->client = this;
  t->done = std::move(done);
  t->easy = curl_easy_init();
  CURL* e = t->easy;
  for (const auto& h : request.headers) t->headers = curl_slist_append(t->headers, h.c_str());
  curl_easy_setopt(e, CURLOPT_PRIVATE, t.get());
  curl_easy_setopt(e, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_POST, 1L);
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, request.body.data());
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_PROXY, "");  // no proxy from the environment: the check must see the destination
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
  if (request.ca_file) curl_easy_setopt(e, CURLOPT_CAINFO, request.ca_file->c_str());
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &t->result);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &t->result);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &open_socket_trampoline);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, t.get());
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
  ++in_flight_;
  if (curl_multi_add_handle(static_cast<CURLM*>(multi_), e) != CURLM_OK) {
    Transfer* raw = t.release();
    raw->result.error = "curl_multi_add_handle failed";
    loop_.defer(alive_, [this, raw] {
      std::unique_ptr<Transfer> owned(raw);
      --in_flight_;
      owned->done(owned->result);
    });
    return;
  }
  transfers_.insert(t.release());  // until finish()
}

int HttpClient::on_socket(void* /*easy*/, int fd, int what, void* self, void* watch) {
  auto* client = static_cast<HttpClient*>(self);
  call_guarded("webhook curl socket", [&] {
    auto* w = static_cast<Watch*>(watch);
    CURLM* m = static_cast<CURLM*>(client->multi_);
    if (what == CURL_POLL_REMOVE) {
      delete w;
      curl_multi_assign(m, fd, nullptr);
      return;
    }
    if (!w) {
      w = new Watch;
      w->client = client;
      curl_multi_assign(m, fd, w);
    }
    if (w->ev) {
      event_free(w->ev);
      w->ev = nullptr;
    }
    short events = EV_PERSIST;
    if (what & CURL_POLL_IN) events |= EV_READ;
    if (what & CURL_POLL_OUT) events |= EV_WRITE;
    w->ev = event_new(client->loop_.raw(), fd, events, &HttpClient::on_event, w);
    event_add(w->ev, nullptr);
  });
  return 0;
}

int HttpClient::on_timer(void* /*multi*/, long timeout_ms, void* self) {
  auto* client = static_cast<HttpClient*>(self);
  call_guarded("webhook curl timer", [&] {
    if (timeout_ms < 0) {
      client->timer_.cancel();
    } else {
      client->timer_.arm(std::chrono::milliseconds(timeout_ms));  // 0: on the next loop turn, not from here
    }
  });
  return 0;
}

namespace {
curl_socket_t open_socket_trampoline(void* user, curlsocktype purpose, curl_sockaddr* address) {
  return static_cast<curl_socket_t>(HttpClient::open_socket(user, static_cast<int>(purpose), address));
}
}  // namespace

void HttpClient::on_event(int fd, short events, void* watch) {
  auto* w = static_cast<Watch*>(watch);
  HttpClient* client = w->client;  // `w` may be deleted inside socket_action
  call_guarded("webhook socket event", [&] {
    int flags = 0;
    if (events & EV_READ) flags |= CURL_CSELECT_IN;
    if (events & EV_WRITE) flags |= CURL_CSELECT_OUT;
    client->socket_action(fd, flags);
  });
}

void HttpClient::socket_action(int fd, int events) {
  int running = 0;
  curl_multi_socket_action(static_cast<CURLM*>(multi_), fd, events, &running);
  collect_finished();
}

void HttpClient::collect_finished() {
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(static_cast<CURLM*>(multi_), &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    Transfer* t = nullptr;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
    finish(t, msg->data.result);
  }
}

void HttpClient::finish(Transfer* raw, int code) {
  std::unique_ptr<Transfer> t(raw);
  transfers_.erase(raw);
  curl_multi_remove_handle(static_cast<CURLM*>(multi_), t->easy);
  --in_flight_;
  long status = 0;
  curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
  AttemptResult r = std::move(t->result);
  const auto result = static_cast<CURLcode>(code);
  if (!t->refusal.empty() && !t->opened && status == 0) {  // every address refused: nothing was sent
    r.destination_refused = true;
    r.error = t->refusal;
  } else if (status > 0 && (result == CURLE_OK || result == CURLE_WRITE_ERROR)) {
    r.status = status;
  } else {
    r.status = 0;
    r.error = std::string(curl_easy_strerror(result)) + (t->error[0] ? std::string(": ") + t->error : std::string());
  }
  Done done = std::move(t->done);
  t.reset();
  done(r);
}

}  // namespace expiry
