#!lua name=expiry_v1
-- expiry_v1: the server-side half of the expiry-relay protocol (docs/protocol.md).
-- Every operation on a task is one of these functions, so each is atomic.
-- Key layout, for a namespace NS and bucket B (always 0 until cluster mode):
--   NS:{B}:schedule   ZSET   member = task id, score = due time (ms, Redis clock)
--   NS:{B}:t:<id>     STRING trigger key, PX = due - now + 100; its `expired` event is a hint
--   NS:{B}:task:<id>  HASH   payload, due_ms, created_ms[, stream]
--   NS:{B}:wake       channel; the new earliest due time is published when it moves earlier

local MAX_ID_BYTES = 256
local MAX_PAYLOAD_BYTES = 65536
-- The trigger key outlives the due time by this much. The relays' timers claim a task at its
-- due time and delete the trigger before it expires, which emits no `expired` event (a DEL of an
-- already-expired key would emit one, and cost every relay a useless claim). The event is the
-- hint for the tasks no timer took.
local TRIGGER_GRACE_MS = 100
-- One expiry_sweep call stops claiming after this much time (checked every SWEEP_CHECK_EVERY
-- tasks) and reports the rest as still due, so the relay calls again. A claim costs 5-50 us (by
-- machine, more with millions of keys), so the limit alone would not bound how long Redis is blocked.
local SWEEP_BUDGET_US = 2000
local SWEEP_CHECK_EVERY = 8
local SWEEP_CHUNK = 128

-- Raises a plain error reply "ERR expiry: <msg>" (no Lua position prefix).
local function fail(msg)
  error({err = 'ERR expiry: ' .. msg})
end

local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local function now_ms()
  return math.floor(now_us() / 1000)
end

local function ms_string(x)
  return string.format('%.0f', x)
end

-- The key prefix "NS:{B}:" of a schedule key "NS:{B}:schedule".
local function prefix_of(schedule_key)
  local suffix = 'schedule'
  if #schedule_key <= #suffix or string.sub(schedule_key, -#suffix) ~= suffix then
    fail('first key must be the schedule key NS:{B}:schedule')
  end
  return string.sub(schedule_key, 1, #schedule_key - #suffix)
end

-- True if s is valid UTF-8 (no overlong forms, surrogates or code points above U+10FFFF).
local function valid_utf8(s)
  local i, n = 1, #s
  while i <= n do
    local c = string.byte(s, i)
    local len, cp
    if c < 0x80 then
      len, cp = 1, c
    elseif c >= 0xC2 and c <= 0xDF then
      len, cp = 2, c - 0xC0
    elseif c >= 0xE0 and c <= 0xEF then
      len, cp = 3, c - 0xE0
    elseif c >= 0xF0 and c <= 0xF4 then
      len, cp = 4, c - 0xF0
    else
      return false
    end
    if i + len - 1 > n then return false end
    for k = 1, len - 1 do
      local b = string.byte(s, i + k)
      if b < 0x80 or b > 0xBF then return false end
      cp = cp * 64 + (b - 0x80)
    end
    if len == 3 and (cp < 0x800 or (cp >= 0xD800 and cp <= 0xDFFF)) then return false end
    if len == 4 and (cp < 0x10000 or cp > 0x10FFFF) then return false end
    i = i + len
  end
  return true
end

-- Task ids: 1..256 bytes of valid UTF-8 without control characters (the same rule as
-- task_id_error in src/key_layout.cpp).
local function check_id(id)
  if id == nil or #id == 0 then fail('empty task id') end
  if #id > MAX_ID_BYTES then fail('task id longer than 256 bytes') end
  if string.find(id, '%c') then fail('task id contains a control character') end
  if not valid_utf8(id) then fail('task id is not valid UTF-8') end
end

-- Checks that KEYS are the schedule, trigger and shadow keys of `id` (protects the layout
-- against producers that build keys by hand).
local function check_task_keys(keys, id)
  local prefix = prefix_of(keys[1])
  if keys[2] ~= prefix .. 't:' .. id or keys[3] ~= prefix .. 'task:' .. id then
    fail('keys do not match the layout NS:{B}:schedule NS:{B}:t:<id> NS:{B}:task:<id>')
  end
  return prefix
end

local function parse_ms(s, what)
  local n = tonumber(s)
  if n == nil or n ~= math.floor(n) or n < 0 or n > 253402300799999 then
    fail(what .. ' must be a non-negative integer number of milliseconds')
  end
  return n
end

-- Fails (before any write) unless the calling ACL user may run this command on these keys:
-- Redis keeps the writes a function made before an error, so a permission refused half-way
-- would leave a task half-claimed.
local function require_permission(...)
  if not redis.acl_check_cmd(...) then
    fail('the Redis user may not run ' .. table.concat({...}, ' ', 1, math.min(2, select('#', ...))) ..
         ' (see docs/security.md); nothing was written')
  end
end

local function key_type(key)
  return redis.call('TYPE', key)['ok']
end

-- What one claiming call checks once rather than per task: the clock, and each stream's type
-- and permissions (the keys a call touches only change through its own writes, which keep the
-- cache up to date). Built by claim_context, used by forward.
-- `types` may hold stream types the caller has already read.
local function claim_context(schedule_key, prefix, now, via, default_stream, group, types)
  require_permission('ZREM', schedule_key, 'id')
  return {schedule_key = schedule_key, prefix = prefix, now = now, fired = ms_string(now), via = via,
          default_stream = default_stream, group = group,
          types = types or {},  -- stream key -> TYPE as of now in this call
          writable = {}}  -- stream key -> true once XADD (and XGROUP CREATE if new) are permitted
end

local function stream_type(ctx, stream)
  local t = ctx.types[stream]
  if t == nil then
    t = key_type(stream)
    ctx.types[stream] = t
  end
  return t
end

-- Claims one due task: removes it from the ZSET and appends it to its stream, in that order but
-- only after every check that could fail has passed, because Redis does not roll back the
-- writes of a function that errors half-way. A missing or wrong-typed shadow hash is forwarded
-- with a missing_payload marker; a per-task stream that is not a stream is replaced by the
-- default stream with an undeliverable_stream marker. Never drops a task.
local function forward(ctx, id, due)
  local shadow = ctx.prefix .. 'task:' .. id
  local trigger = ctx.prefix .. 't:' .. id
  local fields = {}
  local ok, h = pcall(redis.call, 'HGETALL', shadow)
  if ok then
    for i = 1, #h, 2 do fields[h[i]] = h[i + 1] end
  elseif not string.find(tostring(h['err'] or h), 'WRONGTYPE', 1, true) then
    fail('cannot read ' .. shadow .. ': ' .. tostring(h['err'] or h) .. '; nothing was written')
  end
  local entry = {'id', id, 'payload', fields['payload'] or '',
                 'due_ms', fields['due_ms'] or ms_string(due), 'fired_ms', ctx.fired, 'via', ctx.via}
  if fields['created_ms'] then
    entry[#entry + 1] = 'created_ms'
    entry[#entry + 1] = fields['created_ms']
  end
  if fields['payload'] == nil then
    entry[#entry + 1] = 'missing_payload'
    entry[#entry + 1] = ok and 'absent' or 'wrongtype'
  end
  local stream = fields['stream'] or ctx.default_stream
  local kind = stream_type(ctx, stream)
  if kind ~= 'stream' and kind ~= 'none' and stream ~= ctx.default_stream then
    entry[#entry + 1] = 'undeliverable_stream'
    entry[#entry + 1] = stream
    stream = ctx.default_stream
    kind = stream_type(ctx, stream)
  end
  if kind ~= 'stream' and kind ~= 'none' then
    fail('stream key ' .. stream .. ' holds a ' .. kind .. ', not a stream; nothing was claimed')
  end
  if not ctx.writable[stream] then
    require_permission('XADD', stream, '*', 'id', id)
    if kind == 'none' then require_permission('XGROUP', 'CREATE', stream, ctx.group, '0', 'MKSTREAM') end
    ctx.writable[stream] = true
  end
  require_permission('DEL', shadow, trigger)
  -- Writes start here; none of them can fail on our data or permissions.
  redis.call('ZREM', ctx.schedule_key, id)
  if kind == 'none' then
    redis.call('XGROUP', 'CREATE', stream, ctx.group, '0', 'MKSTREAM')
    ctx.types[stream] = 'stream'
  end
  local entry_id = redis.call('XADD', stream, '*', unpack(entry))
  redis.call('DEL', shadow, trigger)
  ctx.types[shadow] = nil
  ctx.types[trigger] = nil
  return entry_id
end

-- expiry_schedule KEYS: schedule, trigger, shadow  ARGV: id, 'delay'|'at', ms, payload[, stream]
-- Creates or atomically replaces the task. Returns {due_ms, replaced (0|1)}.
local function schedule(keys, args)
  local id, mode, value, payload, stream = args[1], args[2], args[3], args[4], args[5]
  check_id(id)
  local prefix = check_task_keys(keys, id)
  if payload == nil then fail('missing payload argument') end
  if #payload > MAX_PAYLOAD_BYTES then fail('payload larger than 65536 bytes') end
  local now = now_ms()
  local due
  if mode == 'delay' then
    due = now + parse_ms(value, 'delay')
  elseif mode == 'at' then
    due = parse_ms(value, 'due time')
  else
    fail("mode must be 'delay' or 'at'")
  end
  local head = redis.call('ZRANGE', keys[1], 0, 0, 'WITHSCORES')
  require_permission('ZADD', keys[1], '0', id)
  require_permission('DEL', keys[3])
  require_permission('HSET', keys[3], 'payload', '')
  require_permission('SET', keys[2], '1')
  require_permission('PUBLISH', prefix .. 'wake', '0')
  local added = redis.call('ZADD', keys[1], due, id)
  redis.call('DEL', keys[3])
  if stream ~= nil and stream ~= '' then
    redis.call('HSET', keys[3], 'payload', payload, 'due_ms', ms_string(due), 'created_ms', ms_string(now),
               'stream', stream)
  else
    redis.call('HSET', keys[3], 'payload', payload, 'due_ms', ms_string(due), 'created_ms', ms_string(now))
  end
  local ttl = due - now
  if ttl < 0 then ttl = 0 end
  ttl = ttl + TRIGGER_GRACE_MS
  redis.call('SET', keys[2], '1', 'PX', ms_string(ttl))
  if head[1] == nil or due < tonumber(head[2]) then
    redis.call('PUBLISH', prefix .. 'wake', ms_string(due))
  end
  return {due, added == 0 and 1 or 0}
end

-- expiry_cancel KEYS: schedule, trigger, shadow  ARGV: id
-- Returns 1 when a pending task was cancelled, 0 when there was none (fired or never scheduled).
local function cancel(keys, args)
  local id = args[1]
  check_id(id)
  check_task_keys(keys, id)
  require_permission('DEL', keys[2], keys[3])
  if redis.call('ZREM', keys[1], id) == 1 then
    redis.call('DEL', keys[2], keys[3])
    return 1
  end
  return 0
end

-- expiry_claim KEYS: schedule, trigger, shadow, stream  ARGV: id, via, group
-- Forwards one task if it is in the schedule and due. Returns {1, entry_id, lateness_ms} when forwarded,
-- {0} when it was not pending (already claimed, cancelled), {-1, due_ms} when not yet due.
local function claim(keys, args)
  local id, via, group = args[1], args[2], args[3]
  check_id(id)
  local prefix = check_task_keys(keys, id)
  local score = redis.call('ZSCORE', keys[1], id)
  if not score then return {0} end
  local due = tonumber(score)
  local now = now_ms()
  if due > now then return {-1, due} end
  local ctx = claim_context(keys[1], prefix, now, via, keys[4], group)
  return {1, forward(ctx, id, due), now - due}
end

-- expiry_sweep KEYS: schedule, stream  ARGV: limit, via, group
-- Forwards up to `limit` due tasks, earliest first, for at most about SWEEP_BUDGET_US. Returns
-- {forwarded, next_due_ms or -1, now_us, pending, overdue, {lateness_ms of each forwarded task}};
-- now_us is the Redis clock in microseconds at the end of the call, so relays can arm their
-- timers precisely; next_due_ms <= now_us / 1000 means more are already due. pending and overdue count what is left.
local function sweep(keys, args)
  local limit = tonumber(args[1])
  if limit == nil or limit < 1 or limit > 10000 then fail('sweep limit must be 1..10000') end
  local via, group = args[2], args[3]
  local prefix = prefix_of(keys[1])
  local default_type = key_type(keys[2])
  if default_type ~= 'stream' and default_type ~= 'none' then
    fail('stream key ' .. keys[2] .. ' holds a ' .. default_type .. ', not a stream; nothing was claimed')
  end
  local started_us = now_us()
  local now = math.floor(started_us / 1000)
  local lateness = {}
  local ctx = nil
  local out_of_time = false
  -- Due members are read SWEEP_CHUNK at a time (each claim removes its member, so the next
  -- chunk starts at offset 0 again): a large limit cut short by the time budget reads no more
  -- than it claims.
  while #lateness < limit and not out_of_time do
    local want = math.min(SWEEP_CHUNK, limit - #lateness)
    local due = redis.call('ZRANGEBYSCORE', keys[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, want)
    if #due == 0 then break end
    ctx = ctx or claim_context(keys[1], prefix, now, via, keys[2], group, {[keys[2]] = default_type})
    for i = 1, #due, 2 do
      local score = tonumber(due[i + 1])
      forward(ctx, due[i], score)
      lateness[#lateness + 1] = now - score
      if #lateness % SWEEP_CHECK_EVERY == 0 and now_us() - started_us >= SWEEP_BUDGET_US then
        out_of_time = true
        break
      end
    end
    if #due < 2 * want then break end
  end
  local head = redis.call('ZRANGE', keys[1], 0, 0, 'WITHSCORES')
  local next_due = -1
  local overdue = 0
  if head[1] ~= nil then
    next_due = tonumber(head[2])
    if next_due <= now then overdue = redis.call('ZCOUNT', keys[1], '-inf', now) end
  end
  local pending = redis.call('ZCARD', keys[1])
  -- The clock when the reply leaves, not when the sweep began: a relay arms its timer from it
  -- on receipt, and a batch can take milliseconds.
  return {#lateness, next_due, now_us(), pending, overdue, lateness}
end

-- expiry_dead_letter KEYS: stream, dead_stream  ARGV: group, entry_id, reason, deliveries
-- Moves a pending entry that keeps failing into the dead-letter stream and acknowledges it, in
-- one step, so a poison entry is neither lost nor dead-lettered twice. The dead entry carries
-- the original fields plus original_id, original_stream, group, reason, deliveries, dead_ms.
-- Returns 1 if moved, 0 if the entry was no longer pending (another consumer settled it).
local function dead_letter(keys, args)
  local group, entry_id, reason, deliveries = args[1], args[2], args[3], args[4]
  local pending = redis.call('XPENDING', keys[1], group, entry_id, entry_id, 1)
  if #pending == 0 then return 0 end
  local dead = {'original_id', entry_id, 'original_stream', keys[1], 'group', group,
                'reason', reason or '', 'deliveries', deliveries or '', 'dead_ms', ms_string(now_ms())}
  require_permission('XADD', keys[2], '*', 'original_id', entry_id)
  require_permission('XACK', keys[1], group, entry_id)
  local found = redis.call('XRANGE', keys[1], entry_id, entry_id)
  if #found == 1 then
    local fields = found[1][2]
    for i = 1, #fields do dead[#dead + 1] = fields[i] end
  else
    dead[#dead + 1] = 'missing_entry'
    dead[#dead + 1] = '1'
  end
  redis.call('XADD', keys[2], '*', unpack(dead))
  redis.call('XACK', keys[1], group, entry_id)
  return 1
end

-- expiry_version: the protocol version this library implements.
local function version()
  return 1
end

redis.register_function('expiry_schedule', schedule)
redis.register_function('expiry_cancel', cancel)
redis.register_function('expiry_claim', claim)
redis.register_function('expiry_sweep', sweep)
redis.register_function('expiry_dead_letter', dead_letter)
redis.register_function{function_name = 'expiry_version', callback = version, flags = {'no-writes'}}
