-- The producers' calls on tasks: schedule (one or many), reschedule and cancel.

-- One schedule_many call takes at most this many tasks, and at most MAX_SCHEDULE_BATCH_BYTES of
-- payloads in all: a full call blocks Redis for a few milliseconds, and larger calls were not
-- faster (docs/benchmarks.md, "Figures behind the library's limits"). A caller with more tasks
-- makes more calls.
local MAX_SCHEDULE_BATCH = 250
local MAX_SCHEDULE_BATCH_BYTES = 4 * 1024 * 1024

-- The due time of a schedule or reschedule: 'delay' counts from `now`, 'at' is absolute.
local function due_from(mode, value, now)
  if mode == 'delay' then return now + parse_ms(value, 'delay') end
  if mode == 'at' then return parse_ms(value, 'due time') end
  fail("mode must be 'delay' or 'at'")
end

-- What the schedule functions check once per call: the bucket's key prefix, namespace and
-- hash tag, the Redis clock, and the streams whose slot was checked already.
local function schedule_context(schedule_key)
  local prefix, ns, tag = served_prefix_of(schedule_key)
  return {schedule_key = schedule_key, prefix = prefix, ns = ns, tag = tag, streams = {}}
end

-- Fails unless a task's stream can be checked now: on a cluster a stream outside the task's
-- slot could never take its entry, so it is refused rather than marked undeliverable when the
-- task fires. (A producer whose ACL user may not read the stream skips this check; the claim
-- then marks such a task undeliverable.) Each stream is checked once per call.
local function check_task_stream_slot(ctx, stream, id)
  if ctx.streams[stream] or not redis.acl_check_cmd('TYPE', stream) then return end
  local ok, err = pcall(redis.call, 'TYPE', stream)
  local text = tostring(err)
  if not ok and (is_elsewhere(err) or string.find(text, 'same slot', 1, true)) then
    if hash_tag(stream) == ctx.tag and is_elsewhere(err) then
      fail('migrating: the slot of ' .. stream .. ' is moving to another node; retry (nothing was written)')
    end
    fail('stream ' .. stream .. ' is not in the hash slot of task ' .. id .. ' (on Redis Cluster a per-task ' ..
         'stream must carry the task\'s hash tag ' .. ctx.tag .. ', e.g. orders:' .. ctx.tag .. ':timeouts); ' ..
         'nothing was written')
  end
  ctx.streams[stream] = true
end

-- Checks one task to schedule without writing: its id, its keys (the bucket's trigger and
-- shadow keys of the id), its payload and stream, its due time from `now` and its options
-- (parse_task_options). Returns the task as schedule_tasks writes it. `stream` nil or '' means
-- the relay's default stream.
local function task_to_schedule(ctx, trigger_key, shadow_key, id, mode, value, payload, stream, now, options)
  check_id(id)
  check_keys_of_task(ctx.prefix, trigger_key, shadow_key, id)
  if payload == nil then fail('missing payload argument') end
  if stream ~= nil and in_task_key_space(stream, ctx.ns) then
    fail('stream ' .. stream .. ' lies inside the task key space ' .. ctx.ns ..
         ':{B}: (a later schedule would delete it); choose another name')
  end
  if #payload > MAX_PAYLOAD_BYTES then fail('payload larger than 65536 bytes') end
  if stream == '' then stream = nil end
  if stream ~= nil then check_task_stream_slot(ctx, stream, id) end
  return {id = id, trigger = trigger_key, shadow = shadow_key, payload = payload, stream = stream,
          due = due_from(mode, value, now), opts = parse_task_options(options)}
end

-- Creates or atomically replaces each checked task, in order (a later task with the same id
-- replaces an earlier one): its schedule member, a fresh shadow hash and the trigger's PX, as
-- its options say (if_absent: a pending task is kept, nothing written; debounce_max_ms: the due
-- time is at most that long after the pending task's first schedule); then
-- publishes the earliest new due time on the bucket's wake channel once, when it moves the
-- schedule's head earlier. Fails before the first write unless the user may run those commands
-- (on the first task's keys: Redis checked every declared key against the user's key patterns
-- before the call). After the checks nothing can fail: the schedule's type was read by ZRANGE.
-- `db` (nil or parse_db's) names the caller's database in the wake message.
-- Returns the replaced flags (1 when the id was pending, 2 when it was kept), one per task;
-- each task's `due` is then its due time as written (or kept).
local function schedule_tasks(ctx, tasks, now, db)
  local head = redis.call('ZRANGE', ctx.schedule_key, 0, 0, 'WITHSCORES')
  local wake = wake_channel(ctx.prefix)
  local first = tasks[1]
  require_permission('ZADD', ctx.schedule_key, '0', first.id)
  require_permission('DEL', first.shadow)
  require_permission('HSET', first.shadow, 'payload', '')
  require_permission('SET', first.trigger, '1')
  require_permission('PUBLISH', wake, '0')
  for i = 1, #tasks do
    if tasks[i].opts.if_absent then require_permission('ZSCORE', ctx.schedule_key, first.id) end
    if tasks[i].opts.debounce_max_ms then require_permission('HMGET', first.shadow, 'first_ms') end
  end
  local created = ms_string(now)
  local replaced = {}
  local earliest = nil
  for i = 1, #tasks do
    local t = tasks[i]
    local opts = t.opts
    local pending = nil
    if opts.if_absent or opts.debounce_max_ms then pending = redis.call('ZSCORE', ctx.schedule_key, t.id) end
    if opts.if_absent and pending then
      t.due = clamp_ms(tonumber(pending))  -- kept: nothing written
      replaced[i] = 2
    else
      -- The due time is the schedule member's score only (keys.lua): not stored twice.
      local fields = {'payload', t.payload, 'created_ms', created}
      if opts.debounce_max_ms then
        -- The pending task's first schedule time bounds its due time (first_ms, kept while it
        -- is pending; created_ms when it was scheduled once).
        local first_ms = nil
        if pending then
          local ok, f = pcall(redis.call, 'HMGET', t.shadow, 'first_ms', 'created_ms')
          if ok then first_ms = tonumber(f[1] or f[2] or '') end
        end
        first_ms = first_ms or now
        t.due = math.min(t.due, first_ms + opts.debounce_max_ms)
        if pending then
          fields[#fields + 1] = 'first_ms'
          fields[#fields + 1] = ms_string(first_ms)
        end
      end
      if t.stream ~= nil then
        fields[#fields + 1] = 'stream'
        fields[#fields + 1] = t.stream
      end
      if opts.max_late_ms then
        fields[#fields + 1] = 'max_late_ms'
        fields[#fields + 1] = ms_string(opts.max_late_ms)
      end
      if opts.traceparent then
        fields[#fields + 1] = 'traceparent'
        fields[#fields + 1] = opts.traceparent
      end
      if opts.webhook then
        fields[#fields + 1] = 'webhook'
        fields[#fields + 1] = opts.webhook
      end
      local added = redis.call('ZADD', ctx.schedule_key, t.due, t.id)
      redis.call('DEL', t.shadow)
      redis.call('HSET', t.shadow, unpack(fields))
      redis.call('SET', t.trigger, '1', 'PX', trigger_ttl(t.due, now))
      replaced[i] = added == 0 and 1 or 0
      if earliest == nil or t.due < earliest then earliest = t.due end
    end
  end
  if earliest ~= nil and (head[1] == nil or earliest < tonumber(head[2])) then
    redis.call('PUBLISH', wake, wake_message(earliest, db))
  end
  return replaced
end

-- expiry_v2_schedule KEYS: schedule, trigger, shadow
--                    ARGV: id, 'delay'|'at', ms, payload[, stream ('' for none)[, db ('' for none)[, options]]]
-- Creates or atomically replaces the task, as its options say (parse_task_options). Returns
-- {due_ms, replaced}: replaced 0 created, 1 replaced, 2 kept (if_absent; due_ms is the pending
-- task's). `db`, the caller's database, is named in the wake message.
local function schedule(keys, args)
  local id = args[1]
  check_id(id)
  local db = parse_db(args[6])
  local ctx = schedule_context(keys[1])
  local now = now_ms()
  local task = task_to_schedule(ctx, keys[2], keys[3], id, args[2], args[3], args[4], args[5], now, args[7])
  local replaced = schedule_tasks(ctx, {task}, now, db)
  return {task.due, replaced[1]}
end

-- expiry_v2_schedule_many KEYS: schedule, then per task: trigger, shadow
--                         ARGV: n, then per task: id, 'delay'|'at', ms, payload, stream ('' for none),
--                               then optionally db (the caller's database, named in the wake message)
--                         or ARGV: 'opts', n, then per task: those five and its options
--                               (parse_task_options; '' for none), then optionally db
-- Schedules n (0..MAX_SCHEDULE_BATCH) tasks of one bucket, each exactly as schedule would, in
-- one call. Every task is checked before the first write, so an invalid task writes nothing at
-- all; the error names it: "ERR expiry: task #<i> (id <id>): <reason>" (i 1-based), or
-- "ERR expiry: migrating: task #<i> ..." when its stream's slot is moving.
-- Returns {due_1, replaced_1, ..., due_n, replaced_n} (replaced 1 when the id was pending,
-- or appeared earlier in the same call; 2 when kept by if_absent).
local function schedule_many(keys, args)
  local base, per = 1, 5  -- ARGV[base] is n; each task takes `per` arguments
  if args[1] == 'opts' then base, per = 2, 6 end
  local n = tonumber(args[base])
  if n == nil or n ~= math.floor(n) or n < 0 or n > MAX_SCHEDULE_BATCH then
    fail('the task count (first argument, after opts) must be an integer 0..' .. MAX_SCHEDULE_BATCH)
  end
  if #keys ~= 1 + 2 * n or (#args ~= base + per * n and #args ~= base + 1 + per * n) then
    fail('expiry_schedule_many needs 1 + 2n keys (schedule, then trigger and shadow per task) and 1 + 5n or 2 + 5n ' ..
         'arguments (n, then id, mode, ms, payload, stream per task, then optionally db; with opts first: 2 + 6n or ' ..
         '3 + 6n, options after each stream) for n = ' .. n .. '; got ' ..
         #keys .. ' keys and ' .. #args .. ' arguments; nothing was written')
  end
  local db = parse_db(args[base + 1 + per * n])
  local ctx = schedule_context(keys[1])
  if n == 0 then return {} end
  local now = now_ms()
  local tasks = {}
  local bytes = 0
  for i = 1, n do
    local a = base + per * (i - 1)
    local id, payload = args[a + 1], args[a + 4]
    bytes = bytes + #payload
    local ok, task = pcall(task_to_schedule, ctx, keys[2 * i], keys[2 * i + 1], id, args[a + 2], args[a + 3],
                           payload, args[a + 5], now, per == 6 and args[a + 6] or nil)
    if not ok then
      local reason = type(task) == 'table' and task.err or tostring(task)
      reason = string.gsub(reason, '^ERR expiry: ', '')
      local where = 'task #' .. i .. ' (id ' .. id_for_message(id) .. '): '
      if string.sub(reason, 1, 11) == 'migrating: ' then
        fail('migrating: ' .. where .. string.sub(reason, 12))
      end
      fail(where .. reason .. '; nothing was written')
    end
    tasks[i] = task
  end
  if bytes > MAX_SCHEDULE_BATCH_BYTES then
    fail('the payloads add up to ' .. bytes .. ' bytes, more than ' .. MAX_SCHEDULE_BATCH_BYTES ..
         ' in one call; send fewer tasks per call (nothing was written)')
  end
  local replaced = schedule_tasks(ctx, tasks, now, db)
  local reply = {}
  for i = 1, n do
    reply[2 * i - 1] = tasks[i].due
    reply[2 * i] = replaced[i]
  end
  return reply
end

-- expiry_v2_reschedule KEYS: schedule, trigger, shadow  ARGV: id, 'delay'|'at', ms[, db]
-- Moves a pending task to a new due time, keeping its payload and stream (created_ms becomes
-- now: the time it was last scheduled). Fails, writing nothing, when the task is not pending.
-- Returns {due_ms, now_ms}. `db`, the caller's database, is named in the wake message.
local function reschedule(keys, args)
  local id, mode, value = args[1], args[2], args[3]
  check_id(id)
  local db = parse_db(args[4])
  local prefix = check_task_keys(keys, id)
  served_prefix_of(keys[1])
  local now = now_ms()
  local due = due_from(mode, value, now)
  if not redis.call('ZSCORE', keys[1], id) then
    fail('task ' .. id .. ' is not pending (already fired, cancelled or never scheduled); nothing was changed')
  end
  local shadow_type = key_type(keys[3])
  if shadow_type ~= 'hash' and shadow_type ~= 'none' then
    fail('shadow key ' .. keys[3] .. ' holds a ' .. shadow_type .. ', not a hash; nothing was changed')
  end
  local head = redis.call('ZRANGE', keys[1], 0, 0, 'WITHSCORES')
  local wake = wake_channel(prefix)
  require_permission('ZADD', keys[1], 'XX', '0', id)
  require_permission('HSET', keys[3], 'created_ms', '0')
  require_permission('SET', keys[2], '1')
  require_permission('PUBLISH', wake, '0')
  redis.call('ZADD', keys[1], 'XX', due, id)
  if shadow_type == 'hash' then
    redis.call('HSET', keys[3], 'created_ms', ms_string(now))
  end
  redis.call('SET', keys[2], '1', 'PX', trigger_ttl(due, now))
  if head[1] == id or due < tonumber(head[2]) then
    redis.call('PUBLISH', wake, wake_message(due, db))
  end
  return {due, now}
end

-- expiry_v2_cancel KEYS: schedule, trigger, shadow  ARGV: id
-- Returns 1 when a pending task was cancelled, 0 when there was none (fired or never scheduled).
-- Cancelling a recurring schedule's occurrence skips that occurrence only: the schedule asks the
-- relays to arm its next one (when the user may read the task hash and write the refill set).
local function cancel(keys, args)
  local id = args[1]
  check_id(id)
  local prefix = check_task_keys(keys, id)
  require_permission('DEL', keys[2], keys[3])
  local recurring = false
  if redis.acl_check_cmd('HMGET', keys[3], 'recur', 'as_id') then
    local ok, f = pcall(redis.call, 'HMGET', keys[3], 'recur', 'as_id')  -- WRONGTYPE: not an occurrence
    recurring = ok and f[1] == '1' and not f[2]
  end
  if redis.call('ZREM', keys[1], id) == 1 then
    redis.call('DEL', keys[2], keys[3])
    if recurring and redis.acl_check_cmd('ZADD', recur_refill_key(prefix), '0', id) and
       redis.acl_check_cmd('PUBLISH', wake_channel(prefix), 'recur') then
      request_refill(prefix, id, now_ms())
    end
    return 1
  end
  return 0
end
