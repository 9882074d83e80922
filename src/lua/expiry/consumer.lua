-- The consumers' and operators' calls on stream entries: dead-letter, retry, replay of a dead
-- letter, and the retention trim.

-- The entry `entry_id` of `stream`: its fields as a flat name, value list and as a table by
-- name; nil and an empty table when it is gone.
local function read_entry(stream, entry_id)
  local found = redis.call('XRANGE', stream, entry_id, entry_id)
  if #found == 0 then return nil, {} end
  local list, fields = found[1][2], {}
  for i = 1, #list - 1, 2 do fields[list[i]] = list[i + 1] end
  return list, fields
end

-- Moves entry `entry_id` of `stream`, pending in `group`, to `dead_stream` and acknowledges it:
-- a dead letter with original_id, original_stream, group, reason, deliveries and dead_ms before
-- the entry's fields (`entry`, nil when it is gone). The caller has checked the permissions. The
-- XADD is the first write: if Redis refuses it, nothing was written and the entry stays pending.
-- Returns the dead letter's id.
local function move_to_dead(stream, dead_stream, group, entry_id, reason, deliveries, entry)
  local dead = dead_letter_fields({'original_id', entry_id, 'original_stream', stream, 'group', group, 'reason', reason},
                                  deliveries, ms_string(now_ms()), entry)
  local dead_id = redis.call('XADD', dead_stream, '*', unpack(dead))
  redis.call('XACK', stream, group, entry_id)
  return dead_id
end

-- Keeps an entry's missing_payload marker, traceparent and webhook in the shadow hash of its
-- task, scheduled again, so that the task's next entry carries them again. A webhook task also
-- keeps occurrence_ms, the due time of its first delivery (the entry's occurrence_ms, else its
-- due_ms), so every retry of one occurrence names it the same (the webhook-id header).
-- A recurring occurrence's retry also keeps recur, occurrence_ms, occurrence_local and as_id (its
-- schedule's id, which its entry names; redelivery_task).
local function carry_over(shadow, fields, as_id)
  if fields['missing_payload'] then redis.call('HSET', shadow, 'missing_payload', fields['missing_payload']) end
  if fields['traceparent'] then redis.call('HSET', shadow, 'traceparent', fields['traceparent']) end
  if fields['webhook'] or as_id then
    if fields['webhook'] then redis.call('HSET', shadow, 'webhook', fields['webhook']) end
    local occurrence = fields['occurrence_ms'] or fields['due_ms']
    if occurrence then redis.call('HSET', shadow, 'occurrence_ms', occurrence) end
  end
  if as_id then
    redis.call('HSET', shadow, 'as_id', as_id, 'recur', '1')
    if fields['occurrence_local'] then redis.call('HSET', shadow, 'occurrence_local', fields['occurrence_local']) end
  end
end

-- The task that a retry or a replay of the entry with `fields` schedules, of task `task_id`
-- whose keys are `trigger` and `shadow` in the bucket of `schedule_key`: the task itself, or
-- for a recurring occurrence (recur = 1) the one-off task "<id>#<occurrence_ms>" beside it
-- (task <id> holds the schedule's next occurrence), in the same bucket, whose entry names <id>.
-- Returns its id, trigger, shadow, and the id its entry names (nil: its own).
local function redelivery_task(schedule_key, task_id, trigger, shadow, fields)
  if fields['recur'] ~= '1' then return task_id, trigger, shadow, nil end
  local rid = task_id .. '#' .. (fields['occurrence_ms'] or fields['due_ms'] or '0')
  check_id(rid)
  local t, s = task_keys(prefix_of(schedule_key), rid)
  return rid, t, s, task_id
end

-- expiry_v2_dead_letter KEYS: stream, dead_stream  ARGV: group, entry_id, reason, deliveries
-- Moves a pending entry that keeps failing into the dead-letter stream and acknowledges it, in
-- one step, so a poison entry is neither lost nor dead-lettered twice. The dead entry carries
-- the original fields plus original_id, original_stream, group, reason, deliveries, dead_ms.
-- Returns 1 if moved, 0 if the entry was no longer pending (another consumer settled it).
local function dead_letter(keys, args)
  local group, entry_id, reason, deliveries = args[1], args[2], args[3], args[4]
  local pending = redis.call('XPENDING', keys[1], group, entry_id, entry_id, 1)
  if #pending == 0 then return 0 end
  require_permission('XADD', keys[2], '*', 'original_id', entry_id)
  require_permission('XACK', keys[1], group, entry_id)
  local entry = read_entry(keys[1], entry_id)
  move_to_dead(keys[1], keys[2], group, entry_id, reason or '', deliveries or '', entry)
  return 1
end

-- Stream ids as {ms, seq} strings of decimal digits (no leading zeros), compared numerically.
local function id_parts(id)
  local ms, seq = string.match(id, '^(%d+)%-(%d+)$')
  return ms, seq
end

local function digits_less(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end

local function id_less(a, b)
  local am, as = id_parts(a)
  local bm, bs = id_parts(b)
  if am ~= bm then return digits_less(am, bm) end
  return digits_less(as, bs)
end

-- The id right after `id` (the first one a group has not been delivered), or `id` itself when
-- its sequence is too large to add one exactly (a bound one entry lower is still safe).
local function next_id(id)
  local ms, seq = id_parts(id)
  if #seq > 15 then return id end
  return ms .. '-' .. ms_string(tonumber(seq) + 1)
end

-- expiry_v2_trim KEYS: stream  ARGV: retention_ms, limit
-- Trims the entries every consumer group has acknowledged and that are older than retention_ms
-- (Redis clock): XTRIM MINID at the lowest of, over every group, its oldest pending entry and
-- the first id after its last-delivered-id, and of now - retention_ms. An entry some group has
-- not acknowledged (pending, or not yet delivered to it) is never trimmed. With no group the
-- stream is left alone. Whole stream nodes go first (MINID ~ LIMIT limit, so one call frees at
-- most about `limit` entries); once those have caught up, an exact MINID removes the rest, which
-- lie in one node. Returns {trimmed, length after, groups, bound} (bound '' when nothing could go).
local function trim(keys, args)
  local retention = parse_ms(args[1], 'retention')
  local limit = tonumber(args[2])
  if limit == nil or limit ~= math.floor(limit) or limit < 2 or limit > 1000000 then
    fail('trim limit must be 2..1000000')
  end
  local kind = key_type(keys[1])
  if kind == 'none' then return {0, 0, 0, ''} end
  if kind ~= 'stream' then fail('stream key ' .. keys[1] .. ' holds a ' .. kind .. ', not a stream') end
  require_permission('XINFO', 'GROUPS', keys[1])
  require_permission('XLEN', keys[1])
  require_permission('XPENDING', keys[1], 'group')
  require_permission('XTRIM', keys[1], 'MINID', '0')
  local groups = redis.call('XINFO', 'GROUPS', keys[1])
  local length = redis.call('XLEN', keys[1])
  if #groups == 0 then return {0, length, 0, ''} end
  local bound = ms_string(math.max(0, now_ms() - retention)) .. '-0'
  for _, g in ipairs(groups) do
    local info = {}
    for i = 1, #g, 2 do info[g[i]] = g[i + 1] end
    local unseen = next_id(info['last-delivered-id'])
    if id_less(unseen, bound) then bound = unseen end
    if tonumber(info['pending']) > 0 then
      local oldest = redis.call('XPENDING', keys[1], info['name'])[2]
      if oldest and id_less(oldest, bound) then bound = oldest end
    end
  end
  if bound == '0-0' or bound == '0-1' then return {0, length, #groups, ''} end
  local trimmed = redis.call('XTRIM', keys[1], 'MINID', '~', bound, 'LIMIT', limit)
  if trimmed < limit / 2 then
    trimmed = trimmed + redis.call('XTRIM', keys[1], 'MINID', bound)
  end
  return {trimmed, length - trimmed, #groups, bound}
end

-- expiry_v2_replay_dead KEYS: dead_stream, schedule, trigger, shadow
--                       ARGV: entry_id, task_id, delay_ms, default_stream[, db]
-- Schedules the task of one dead-letter entry again, exactly as schedule with 'delay' would (its
-- payload, and its stream when original_stream is not `default_stream`; a missing_payload
-- marker and a traceparent are kept in the shadow hash, so the next entry carries them again),
-- and deletes the entry, in one step. An entry that is gone (replayed or purged already) fails
-- and writes nothing, so two concurrent replays of one entry schedule the task once.
-- task_id must be the entry's `id` field (the caller read it to find the task's bucket); the
-- dead stream and the task's keys must share one slot on a cluster (Redis refuses otherwise).
-- `db`, the caller's database, is named in the wake message.
-- Returns {due_ms, replaced (0|1)} as schedule does.
local function replay_dead(keys, args)
  local entry_id, task_id, delay, default_stream = args[1], args[2], args[3], args[4]
  if entry_id == nil or task_id == nil or delay == nil or default_stream == nil then
    fail('expiry_replay_dead needs ARGV entry_id, task_id, delay_ms, default_stream[, db]')
  end
  parse_db(args[5])
  local entry, fields = read_entry(keys[1], entry_id)
  if entry == nil then
    fail('dead entry ' .. entry_id .. ' is not in ' .. keys[1] .. ' (already replayed or purged); nothing was scheduled')
  end
  if fields['id'] == nil then
    fail('dead entry ' .. entry_id .. ' holds no task id (its stream entry was gone when it was dead-lettered); ' ..
         'nothing was scheduled')
  end
  if fields['id'] ~= task_id then
    fail('dead entry ' .. entry_id .. ' holds task ' .. fields['id'] .. ', not ' .. task_id .. '; nothing was scheduled')
  end
  local stream = fields['original_stream']
  if stream == default_stream then stream = nil end
  require_permission('XDEL', keys[1], entry_id)
  local rid, trigger, shadow, as_id = redelivery_task(keys[2], task_id, keys[3], keys[4], fields)
  if fields['missing_payload'] or fields['traceparent'] or fields['webhook'] or as_id then
    require_permission('HSET', shadow, 'missing_payload', '')
  end
  local result = schedule({keys[2], trigger, shadow},
                          {rid, 'delay', delay, fields['payload'] or '', stream or '', args[5]})
  carry_over(shadow, fields, as_id)
  redis.call('XDEL', keys[1], entry_id)
  return result
end

-- expiry_v2_retry KEYS: stream, dead_stream, schedule, trigger, shadow
--                 ARGV: group, entry_id, task_id, delay_ms, max_attempts, reason[, db]
-- Settles one delivery its handler failed, in one step (a crash can neither lose the task nor
-- run it twice): the entry is acknowledged (not deleted: retention trims it) and the task is
-- scheduled again in `delay_ms` with its payload, for this stream, and attempt = the entry's
-- attempt + 1 in its shadow hash (the claim copies it into the next entry). The entry's
-- attempt is its `attempt` field, 1 when absent. An entry's missing_payload marker and
-- traceparent are kept in the shadow hash too, so the next entry carries them again. When that
-- attempt is max_attempts or more (or the entry is gone from the stream), the entry is moved to
-- dead_stream instead, with the fields dead_letter writes (reason "failed N attempts: <reason>",
-- deliveries = N). When the task is pending again already (a producer scheduled it meanwhile),
-- that schedule is kept and the entry is only acknowledged. The schedule keys must be task_id's
-- (on a cluster in the stream's slot: the bucket stream's own bucket).
-- `db`, the caller's database, is named in the wake message of a task scheduled again.
-- Returns {outcome, due_ms, attempt, dead_entry_id}, four elements whatever happened:
--   outcome        1 scheduled again, 2 dead-lettered, 3 acknowledged only (pending again),
--                  0 the entry was no longer pending (nothing written);
--   due_ms         (1) the task's new due time; -1 otherwise;
--   attempt        (1) the attempt its next entry carries; (2) the attempts it failed; 0 otherwise;
--   dead_entry_id  (2) the dead letter's id; '' otherwise.
local function retry(keys, args)
  local group, entry_id, task_id, delay, max_attempts, reason = args[1], args[2], args[3], args[4], args[5], args[6]
  if reason == nil then
    fail('expiry_retry needs ARGV group, entry_id, task_id, delay_ms, max_attempts, reason[, db]')
  end
  parse_db(args[7])
  local max_n = tonumber(max_attempts)
  if max_n == nil or max_n ~= math.floor(max_n) or max_n < 1 then fail('max_attempts must be an integer >= 1') end
  check_id(task_id)
  check_task_keys({keys[3], keys[4], keys[5]}, task_id)
  parse_ms(delay, 'delay')
  local pending = redis.call('XPENDING', keys[1], group, entry_id, entry_id, 1)
  if #pending == 0 then return {0, -1, 0, ''} end
  local entry, fields = read_entry(keys[1], entry_id)
  if entry ~= nil and fields['id'] ~= task_id then
    fail('entry ' .. entry_id .. ' holds task ' .. tostring(fields['id']) .. ', not ' .. task_id ..
         '; nothing was written')
  end
  local attempt = tonumber(fields['attempt'] or '1')
  if attempt == nil or attempt ~= math.floor(attempt) or attempt < 1 then attempt = 1 end
  require_permission('XACK', keys[1], group, entry_id)
  if entry == nil or attempt >= max_n then
    require_permission('XADD', keys[2], '*', 'original_id', entry_id)
    local dead_id = move_to_dead(keys[1], keys[2], group, entry_id,
                                 'failed ' .. ms_string(attempt) .. ' attempts: ' .. reason, ms_string(attempt), entry)
    return {2, -1, attempt, dead_id}
  end
  local rid, trigger, shadow, as_id = redelivery_task(keys[3], task_id, keys[4], keys[5], fields)
  if redis.call('ZSCORE', keys[3], rid) then
    redis.call('XACK', keys[1], group, entry_id)
    return {3, -1, 0, ''}
  end
  require_permission('HSET', shadow, 'attempt', '2')
  -- schedule() checks everything before its first write; HSET and XACK cannot fail after it.
  local result = schedule({keys[3], trigger, shadow},
                          {rid, 'delay', delay, fields['payload'] or '', keys[1], args[7]})
  redis.call('HSET', shadow, 'attempt', ms_string(attempt + 1))
  carry_over(shadow, fields, as_id)
  redis.call('XACK', keys[1], group, entry_id)
  return {1, result[1], attempt + 1, ''}
end
