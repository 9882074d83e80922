-- The operators' calls on a bucket: cancel and run-now by range, run-now of one task, pause and
-- resume.

-- Range operations (cancel_range, run_now_range) walk a bucket's schedule in due order in bounded
-- calls: each examines at most `limit` members, RANGE_CHUNK at a time, and stops after
-- RANGE_BUDGET_US, so no call blocks Redis for much more than a millisecond (docs/benchmarks.md,
-- "Figures behind the library's limits"). A call returns a cursor "<score>:<skip>" to continue
-- from ('' when the range is done): the next call starts at that score, after the `skip` members
-- there that stayed (did not match). A matched member leaves the walked range (cancelled, or
-- moved to now, below it), so the cursor stays exact while the schedule changes; a task added
-- behind the cursor meanwhile is not visited.
local RANGE_CHUNK = 32
local RANGE_BUDGET_US = 1000
local MAX_RANGE_LIMIT = 10000

local function parse_range_limit(s)
  local limit = tonumber(s)
  if limit == nil or limit ~= math.floor(limit) or limit < 1 or limit > MAX_RANGE_LIMIT then
    fail('limit must be an integer 1..' .. MAX_RANGE_LIMIT)
  end
  return limit
end

-- The ZRANGE BYSCORE bound "(<ms>" (exclusive) of an optional argument, or `open` when it is
-- absent or ''.
local function exclusive_bound(s, what, open)
  if s == nil or s == '' then return open end
  return '(' .. ms_string(parse_ms(s, what))
end

-- Visits the members of `key` from `lower` to `upper` (ZRANGE BYSCORE bounds) after `cursor`
-- whose id starts with `prefix`, calling act(id, score) on each; act returns true when it removed or
-- moved the member out of the range. Returns the count acted on, the count examined and the
-- cursor to continue from ('' when done).
local function walk_range(key, lower, upper, prefix, cursor, limit, act)
  local start, skip = lower, 0
  if cursor ~= nil and cursor ~= '' then
    local score, k = string.match(cursor, '^([^:]+):(%d+)$')
    if score == nil or tonumber(score) == nil then
      fail('cursor must be <score>:<skip> as the previous call returned it')
    end
    start, skip = score, tonumber(k)
  end
  local started = budget_clock_us()
  local examined, acted = 0, 0
  while examined < limit do
    local want = math.min(RANGE_CHUNK, limit - examined)
    local rows = redis.call('ZRANGE', key, start, upper, 'BYSCORE', 'LIMIT', skip, want, 'WITHSCORES')
    local last, kept = nil, 0  -- the last score examined, and the members kept at it
    for i = 1, #rows, 2 do
      local id, score = rows[i], rows[i + 1]
      examined = examined + 1
      local hit = (prefix == '' or string.sub(id, 1, #prefix) == prefix) and act(id, score)
      if hit then acted = acted + 1 end
      if score ~= last then last, kept = score, 0 end
      if not hit then kept = kept + 1 end
    end
    if #rows < 2 * want then return acted, examined, '' end
    if tonumber(last) == tonumber(start) then skip = skip + kept else skip = kept end
    start = last
    if budget_clock_us() - started >= RANGE_BUDGET_US then break end
  end
  return acted, examined, start .. ':' .. ms_string(skip)
end

-- expiry_v2_cancel_range KEYS: schedule  ARGV: after_ms, before_ms, prefix, cursor, limit
-- Cancels, as cancel would, every pending task of the bucket whose id starts with `prefix` (''
-- for any) and whose due time lies strictly between after_ms and before_ms ('' for no bound),
-- walking at most `limit` (1..10000) members per call (walk_range). Returns
-- {cancelled, examined, cursor}; call again with the cursor until it is ''.
local function cancel_range(keys, args)
  local prefix = prefix_of(keys[1])
  local lower = exclusive_bound(args[1], 'after_ms', '-inf')
  local upper = exclusive_bound(args[2], 'before_ms', '+inf')
  local limit = parse_range_limit(args[5])
  require_permission('ZREM', keys[1], 'id')
  require_permission('DEL', task_keys(prefix, 'x'))
  local cancelled, examined, cursor = walk_range(keys[1], lower, upper, args[3] or '', args[4], limit, function(id)
    redis.call('ZREM', keys[1], id)
    redis.call('DEL', task_keys(prefix, id))
    return true
  end)
  return {cancelled, examined, cursor}
end

-- Makes pending task `id` of the bucket with key prefix `prefix`, due at `due` > now, due now:
-- its score, the shadow hash's promoted_ms and promoted_from_ms (the claim copies the
-- last two into the entry), and the trigger's PX. Payload, stream and attempt stay.
local function promote(schedule_key, prefix, id, due, now)
  local trigger, shadow = task_keys(prefix, id)
  redis.call('ZADD', schedule_key, 'XX', now, id)
  if key_type(shadow) == 'hash' then
    redis.call('HSET', shadow, 'promoted_ms', ms_string(now),
               'promoted_from_ms', ms_string(clamp_ms(due)))
  end
  redis.call('SET', trigger, '1', 'PX', trigger_ttl(now, now))
end

local function require_promote_permissions(schedule_key, prefix)
  local trigger, shadow = task_keys(prefix, 'x')
  require_permission('ZADD', schedule_key, 'XX', '0', 'id')
  require_permission('HSET', shadow, 'promoted_ms', '0')
  require_permission('SET', trigger, '1')
  require_permission('PUBLISH', wake_channel(prefix), '0')
end

-- expiry_v2_run_now KEYS: schedule, trigger, shadow  ARGV: id[, db]
-- Makes a pending task due now (promote), and wakes the relays. Returns {pending, previous_due_ms,
-- due_ms}: {1, previous_due_ms, due_ms} (equal when it was due already: nothing changed), or
-- {0, -1, -1} when it is not pending.
local function run_now(keys, args)
  local id = args[1]
  check_id(id)
  local db = parse_db(args[2])
  local prefix = check_task_keys(keys, id)
  served_prefix_of(keys[1])
  local score = redis.call('ZSCORE', keys[1], id)
  if not score then return {0, -1, -1} end
  local due = tonumber(score)
  local now = now_ms()
  if due <= now then return {1, clamp_ms(due), clamp_ms(due)} end
  require_promote_permissions(keys[1], prefix)
  promote(keys[1], prefix, id, due, now)
  redis.call('PUBLISH', wake_channel(prefix), wake_message(now, db))
  return {1, clamp_ms(due), now}
end

-- expiry_v2_run_now_range KEYS: schedule  ARGV: before_ms, prefix, cursor, limit[, db]
-- Makes every pending task of the bucket not yet due whose id starts with `prefix` ('' for any)
-- and whose due time is before before_ms ('' for no bound) due now (promote), walking at most
-- `limit` members per call (walk_range), and wakes the relays once. Returns
-- {promoted, examined, cursor}; call again with the cursor until it is ''.
local function run_now_range(keys, args)
  local prefix = served_prefix_of(keys[1])
  local upper = exclusive_bound(args[1], 'before_ms', '+inf')
  local limit = parse_range_limit(args[4])
  local db = parse_db(args[5])
  require_promote_permissions(keys[1], prefix)
  local now = now_ms()
  local lower = '(' .. ms_string(now)  -- the tasks due already need nothing
  local cursor = args[3]
  local score = cursor and string.match(cursor, '^([^:]+):')
  if score and tonumber(score) and tonumber(score) <= now then cursor = '' end
  local promoted, examined, next_cursor = walk_range(keys[1], lower, upper, args[2] or '', cursor, limit,
                                                     function(id, score)
    promote(keys[1], prefix, id, tonumber(score), now)
    return true
  end)
  if promoted > 0 then redis.call('PUBLISH', wake_channel(prefix), wake_message(now, db)) end
  return {promoted, examined, next_cursor}
end

-- The bucket's pending and overdue counts at `now`.
local function backlog(schedule_key, now)
  return redis.call('ZCARD', schedule_key), redis.call('ZCOUNT', schedule_key, '-inf', now)
end

-- expiry_v2_pause KEYS: schedule  ARGV: for_ms (0: until resumed)
-- Pauses the bucket: until resume (or for_ms), claims and sweeps forward nothing, on every relay
-- (NS:{B}:paused holds the end, 0 for none, and expires with it). Schedule, cancel and reads
-- work as usual. Returns {until_ms (0: until resumed), pending, overdue}.
local function pause(keys, args)
  local prefix = served_prefix_of(keys[1])
  local for_ms = parse_ms(args[1], 'for_ms')
  local now = now_ms()
  local untl = for_ms > 0 and now + for_ms or 0
  local key = paused_key(prefix)
  require_permission('SET', key, '0')
  if for_ms > 0 then
    redis.call('SET', key, ms_string(untl), 'PX', ms_string(for_ms))
  else
    redis.call('SET', key, '0')
  end
  local pending, overdue = backlog(keys[1], now)
  return {untl, pending, overdue}
end

-- expiry_v2_resume KEYS: schedule  ARGV: [db]
-- Ends the bucket's pause and wakes the relays for its earliest task, so what was held is
-- forwarded at once, earliest first. Returns {was_paused (0|1), pending, overdue}.
local function resume(keys, args)
  local prefix = served_prefix_of(keys[1])
  local db = parse_db(args[1])
  local key, wake = paused_key(prefix), wake_channel(prefix)
  require_permission('DEL', key)
  require_permission('PUBLISH', wake, '0')
  local was = redis.call('DEL', key)
  local head = redis.call('ZRANGE', keys[1], 0, 0, 'WITHSCORES')
  if head[1] ~= nil then redis.call('PUBLISH', wake, wake_message(clamp_ms(tonumber(head[2])), db)) end
  local pending, overdue = backlog(keys[1], now_ms())
  return {was, pending, overdue}
end
