// See hiredis_reply.h.
#include "io/hiredis_reply.h"

#include <hiredis/hiredis.h>

namespace expiry {

Reply reply_from_hiredis(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_NIL:
      out.type = Reply::Type::Nil;
      break;
    case REDIS_REPLY_STATUS:
      out.type = Reply::Type::Status;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = Reply::Type::Error;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::Integer;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::Array;
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(reply_from_hiredis(r->element[i]));
      break;
    default:  // REDIS_REPLY_STRING, and RESP3 types of hiredis 1.x that carry a string
      out.type = Reply::Type::String;
      if (r->str != nullptr) out.str.assign(r->str, r->len);
      break;
  }
  return out;
}

}  // namespace expiry
