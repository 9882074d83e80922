// One task's calls apart from the connection that carries them: the checks made before sending
// and the decoding of the reply. The Producer (blocking) and expiry-api's pipelined path
// (api/http_worker.h), which sends the same FCALLs on an async connection, share them, so that
// both refuse the same input and read the same replies the same way. Not installed.
#pragma once

#include <string>

#include "producer/task.h"
#include "redis/reply.h"

namespace expiry {

// Throws ConfigError when `id` is not a valid task id.
void check_task_id(const std::string& id);
// Throws ConfigError for a task the library would refuse (task_error), or a stream whose name
// does not belong to namespace `ns`.
void check_task(const Task& task, const std::string& ns);

// The reply to FCALL expiry_schedule (TaskPlacement::schedule_argv). Throws AuthError or
// ReplyError for an error reply (expect_ok; an IoError reply too: a caller on an async
// connection, where a lost call is such a reply, checks for it first), ReplyError for a reply
// of another shape.
ScheduleResult schedule_reply_result(const Reply& reply);
// The reply to FCALL expiry_cancel (cancel_argv): true when the task was pending. Throws as
// schedule_reply_result does.
bool cancel_reply_result(const Reply& reply);

}  // namespace expiry
