// Test helpers over SyncConnection; see redis_client.h for the contracts.
#include "support/redis_client.h"

#include <signal.h>

#include <chrono>
#include <mutex>
#include <stdexcept>

namespace expiry::test {
namespace {

void ignore_sigpipe_if_default() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction current {};
        if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL &&
            !(current.sa_flags & SA_SIGINFO)) {
            struct sigaction ignore {};
            ignore.sa_handler = SIG_IGN;
            sigemptyset(&ignore.sa_mask);
            sigaction(SIGPIPE, &ignore, nullptr);
        }
    });
}

}  // namespace

RedisEndpoint test_endpoint(const std::string& host, int port) {
    ignore_sigpipe_if_default();
    RedisEndpoint endpoint;
    endpoint.host = host;
    endpoint.port = port;
    return endpoint;
}

SyncConnection::Options test_connection_options() {
    SyncConnection::Options options;
    options.connect_timeout = std::chrono::seconds(2);
    options.command_timeout = std::chrono::seconds(60);
    return options;
}

std::unique_ptr<SyncConnection> connect_redis(const std::string& host, int port) {
    return std::make_unique<SyncConnection>(test_endpoint(host, port), test_connection_options());
}

TestConnection::TestConnection(const std::string& host, int port)
    : SyncConnection(test_endpoint(host, port), test_connection_options()) {}

long long integer(SyncConnection& redis, const std::vector<std::string>& argv) {
    const Reply r = redis.command(argv);
    if (r.type != Reply::Type::Integer)
        throw std::runtime_error("expected an integer reply to " + argv.at(0) + ", got " + r.describe());
    return r.integer;
}

void pipeline(SyncConnection& redis, const std::vector<std::vector<std::string>>& cmds,
              std::vector<Reply>* out) {
    for (const auto& argv : cmds) {  // validate first so a bad command cannot desync the stream
        if (argv.empty()) throw std::invalid_argument("empty command in pipeline");
    }
    for (const auto& argv : cmds) redis.append(argv);
    std::vector<Reply> replies;
    replies.reserve(cmds.size());
    for (size_t i = 0; i < cmds.size(); ++i) replies.push_back(redis.read_reply());
    if (out != nullptr) {
        *out = std::move(replies);
        return;
    }
    for (size_t i = 0; i < replies.size(); ++i) {
        if (replies[i].failed())
            throw std::runtime_error("pipeline command " + std::to_string(i) + " (" + cmds[i][0] +
                                     ") failed: " + replies[i].str);
    }
}

std::vector<std::map<std::string, std::string>> xrange_all(SyncConnection& redis, const std::string& stream) {
    std::vector<std::map<std::string, std::string>> entries;
    std::string start = "-";
    for (;;) {
        const Reply page = redis.command({"XRANGE", stream, start, "+", "COUNT", "10000"});
        if (page.type != Reply::Type::Array)
            throw std::runtime_error("XRANGE " + stream + " failed: " + page.describe());
        for (const Reply& entry : page.elements) {
            if (entry.type != Reply::Type::Array || entry.elements.size() != 2 ||
                entry.elements[0].type != Reply::Type::String || entry.elements[1].type != Reply::Type::Array)
                throw std::runtime_error("malformed XRANGE entry: " + entry.describe());
            std::map<std::string, std::string> fields;
            const auto& kv = entry.elements[1].elements;
            for (size_t i = 0; i + 1 < kv.size(); i += 2) fields[kv[i].str] = kv[i + 1].str;
            fields["_entry_id"] = entry.elements[0].str;
            entries.push_back(std::move(fields));
        }
        if (page.elements.size() < 10000) break;
        start = "(" + page.elements.back().elements[0].str;
    }
    return entries;
}

std::vector<std::string> channel_messages(const std::string& host, int port, SyncConnection& publisher,
                                          const std::string& channel, const std::function<void()>& action) {
    TestConnection sub(host, port);
    sub.append({"SUBSCRIBE", channel});
    if (sub.read_reply().elements.size() != 3) throw std::runtime_error("SUBSCRIBE " + channel + " failed");
    action();
    const std::string marker = "channel_messages: end";
    const Reply published = publisher.command({"PUBLISH", channel, marker});
    if (published.type != Reply::Type::Integer) throw std::runtime_error("PUBLISH failed: " + published.describe());
    std::vector<std::string> out;
    for (;;) {
        sub.append({"PING"});
        const Reply m = sub.read_reply();
        if (m.elements.size() != 3 || m.elements[0].str != "message") continue;  // a pong
        if (m.elements[2].str == marker) return out;
        out.push_back(m.elements[2].str);
    }
}

}  // namespace expiry::test
