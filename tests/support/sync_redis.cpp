// SyncRedis implementation on top of the blocking hiredis API (0.14 and 1.x).
#include "support/sync_redis.h"

#include <hiredis/hiredis.h>
#include <signal.h>

#include <cstdio>
#include <memory>
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

SyncRedis::Reply convert(const redisReply* r) {
    using Type = SyncRedis::Reply::Type;
    SyncRedis::Reply out;
    switch (r->type) {
        case REDIS_REPLY_NIL:
            out.type = Type::Nil;
            break;
        case REDIS_REPLY_STATUS:
            out.type = Type::Status;
            out.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_ERROR:
            out.type = Type::Error;
            out.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_INTEGER:
            out.type = Type::Integer;
            out.integer = r->integer;
            break;
        case REDIS_REPLY_STRING:
#ifdef REDIS_REPLY_VERB
        case REDIS_REPLY_VERB:
#endif
#ifdef REDIS_REPLY_BIGNUM
        case REDIS_REPLY_BIGNUM:
#endif
#ifdef REDIS_REPLY_DOUBLE
        case REDIS_REPLY_DOUBLE:
#endif
            out.type = Type::String;
            out.str.assign(r->str, r->len);
            break;
#ifdef REDIS_REPLY_BOOL
        case REDIS_REPLY_BOOL:
            out.type = Type::Integer;
            out.integer = r->integer;
            break;
#endif
        case REDIS_REPLY_ARRAY:
#ifdef REDIS_REPLY_MAP
        case REDIS_REPLY_MAP:
#endif
#ifdef REDIS_REPLY_SET
        case REDIS_REPLY_SET:
#endif
#ifdef REDIS_REPLY_PUSH
        case REDIS_REPLY_PUSH:
#endif
            out.type = Type::Array;
            out.elements.reserve(r->elements);
            for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
            break;
        default:
            throw std::runtime_error("SyncRedis: unsupported reply type " + std::to_string(r->type));
    }
    return out;
}

struct ArgvView {
    explicit ArgvView(const std::vector<std::string>& argv) {
        if (argv.empty()) throw std::invalid_argument("SyncRedis: empty command");
        ptrs.reserve(argv.size());
        lens.reserve(argv.size());
        for (const auto& a : argv) {
            ptrs.push_back(a.data());
            lens.push_back(a.size());
        }
    }
    int argc() const { return static_cast<int>(ptrs.size()); }
    std::vector<const char*> ptrs;
    std::vector<size_t> lens;
};

struct ReplyDeleter {
    void operator()(void* r) const { freeReplyObject(r); }
};

void append_quoted(std::string& out, const std::string& s) {
    out += '"';
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        }
    }
    out += '"';
}

}  // namespace

std::string SyncRedis::Reply::to_string() const {
    switch (type) {
        case Type::Nil:
            return "(nil)";
        case Type::Status:
            return str;
        case Type::Error:
            return "(error) " + str;
        case Type::Integer:
            return "(integer) " + std::to_string(integer);
        case Type::String: {
            std::string out;
            append_quoted(out, str);
            return out;
        }
        case Type::Array: {
            std::string out = "[";
            for (size_t i = 0; i < elements.size(); ++i) {
                if (i) out += ", ";
                out += elements[i].to_string();
            }
            return out + "]";
        }
    }
    return "(?)";
}

SyncRedis::SyncRedis(std::string host, int port, std::chrono::milliseconds timeout)
    : host_(std::move(host)), port_(port) {
    ignore_sigpipe_if_default();
    const long long ms = timeout.count() > 0 ? timeout.count() : 1;
    struct timeval tv;
    tv.tv_sec = static_cast<time_t>(ms / 1000);
    tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
    ctx_ = redisConnectWithTimeout(host_.c_str(), port_, tv);
    if (ctx_ == nullptr)
        throw std::runtime_error("SyncRedis: cannot allocate context for " + host_ + ":" +
                                 std::to_string(port_));
    if (ctx_->err) {
        std::string msg = "SyncRedis: cannot connect to " + host_ + ":" + std::to_string(port_) +
                          ": " + ctx_->errstr;
        redisFree(ctx_);
        ctx_ = nullptr;
        throw std::runtime_error(msg);
    }
}

SyncRedis::~SyncRedis() {
    if (ctx_ != nullptr) redisFree(ctx_);
}

void SyncRedis::throw_io_error(const std::string& what) const {
    std::string detail = ctx_->err ? std::string(ctx_->errstr) : std::string("no reply");
    throw std::runtime_error("SyncRedis(" + host_ + ":" + std::to_string(port_) + "): " + what +
                             ": " + detail);
}

SyncRedis::Reply SyncRedis::command(const std::vector<std::string>& argv) {
    ArgvView view(argv);
    std::unique_ptr<void, ReplyDeleter> reply(
        redisCommandArgv(ctx_, view.argc(), view.ptrs.data(), view.lens.data()));
    if (!reply) throw_io_error("command " + argv[0] + " failed");
    return convert(static_cast<redisReply*>(reply.get()));
}

long long SyncRedis::integer(const std::vector<std::string>& argv) {
    Reply r = command(argv);
    if (r.type != Reply::Type::Integer)
        throw std::runtime_error("SyncRedis: expected integer reply to " + argv[0] + ", got " +
                                 r.to_string());
    return r.integer;
}

void SyncRedis::pipeline(const std::vector<std::vector<std::string>>& cmds,
                         std::vector<Reply>* out) {
    for (const auto& argv : cmds) {  // validate first so a bad command cannot desync the stream
        if (argv.empty()) throw std::invalid_argument("SyncRedis: empty command in pipeline");
    }
    for (const auto& argv : cmds) {
        ArgvView view(argv);
        if (redisAppendCommandArgv(ctx_, view.argc(), view.ptrs.data(), view.lens.data()) !=
            REDIS_OK)
            throw_io_error("pipeline append failed");
    }
    std::vector<Reply> replies;
    replies.reserve(cmds.size());
    for (size_t i = 0; i < cmds.size(); ++i) {
        void* raw = nullptr;
        if (redisGetReply(ctx_, &raw) != REDIS_OK || raw == nullptr)
            throw_io_error("pipeline reply " + std::to_string(i) + " failed");
        std::unique_ptr<void, ReplyDeleter> reply(raw);
        replies.push_back(convert(static_cast<redisReply*>(raw)));
    }
    if (out != nullptr) {
        *out = std::move(replies);
        return;
    }
    for (size_t i = 0; i < replies.size(); ++i) {
        if (replies[i].is_error())
            throw std::runtime_error("SyncRedis: pipeline command " + std::to_string(i) + " (" +
                                     cmds[i][0] + ") failed: " + replies[i].str);
    }
}

std::vector<std::map<std::string, std::string>> SyncRedis::xrange_all(const std::string& stream) {
    std::vector<std::map<std::string, std::string>> entries;
    std::string start = "-";
    for (;;) {
        Reply page = command({"XRANGE", stream, start, "+", "COUNT", "10000"});
        if (page.type != Reply::Type::Array)
            throw std::runtime_error("SyncRedis: XRANGE " + stream + " failed: " + page.to_string());
        for (const Reply& entry : page.elements) {
            if (entry.type != Reply::Type::Array || entry.elements.size() != 2 ||
                entry.elements[0].type != Reply::Type::String ||
                entry.elements[1].type != Reply::Type::Array)
                throw std::runtime_error("SyncRedis: malformed XRANGE entry: " + entry.to_string());
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

}  // namespace expiry::test
