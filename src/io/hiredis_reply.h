// The one translation of a hiredis redisReply into our Reply value (used by the async
// connection and by the CLI's blocking one).
#pragma once

#include "redis/reply.h"

struct redisReply;

namespace expiry {

Reply reply_from_hiredis(const redisReply* reply);

}  // namespace expiry
