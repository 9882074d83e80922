// Which commands a client may send again when it cannot know whether the first send ran (the
// connection dropped before the reply): the ones whose second run changes nothing more than the
// first. A READONLY reply is different: the command did not run, so anything may be resent.
#pragma once

#include <string>
#include <vector>

namespace expiry {

// True for reads (FCALL_RO, ZRANGE..., XRANGE..., GET, HGETALL, INFO, PING ...) and for the
// library's idempotent writes: schedule and schedule_many (a replace by id) and reschedule with
// 'at' (an absolute due time), by their v2 names and their deprecated v1 names. False for
// everything else (cancel, whose second run reports "not pending"; retry, replay and claims,
// which would act twice).
bool resend_is_safe(const std::vector<std::string>& argv);

}  // namespace expiry
