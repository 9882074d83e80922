-- Recurring schedules' calls: set, get, list, delete, pause, resume (producers and operators),
-- and refills / refill (the relays). The occurrences themselves are armed in occurrences.lua.

local RECUR_FIELDS = {rule = true, tz = true, start_ms = true, end_ms = true, payload = true, stream = true,
                      webhook = true, max_late_ms = true, misfire = true, grace_ms = true, misfire_max = true}
-- Recurring schedule ids leave room for a retry's "#<occurrence_ms>" suffix within MAX_ID_BYTES.
local MAX_RECUR_ID_BYTES = 200

-- Checks KEYS schedule, trigger, shadow, definition of schedule `id`; returns the bucket's key
-- prefix and namespace.
local function check_recur_keys(keys, id)
  check_id(id)
  if #id > MAX_RECUR_ID_BYTES then fail('recurring schedule id longer than ' .. MAX_RECUR_ID_BYTES .. ' bytes') end
  local prefix, ns = check_task_keys(keys, id)
  if keys[4] ~= recur_key(prefix, id) then
    fail('keys do not match the layout NS:{B}:schedule NS:{B}:t:<id> NS:{B}:task:<id> NS:{B}:recur:<id>')
  end
  return prefix, ns
end

-- Instants from ARGV[from..]: "<utc_ms>|<local ISO-8601>", strictly ascending, at most
-- RECUR_MAX_UPCOMING.
local function parse_instants(args, from)
  local list = {}
  for i = from, #args do
    local ms, loc = string.match(args[i], '^(%d+)|([%d%-T:%.%+Z]+)$')
    if ms == nil then fail('instant #' .. (i - from + 1) .. ' must be "<utc_ms>|<local ISO-8601>"') end
    ms = tonumber(ms)
    if ms > MAX_DUE_MS then fail('instant #' .. (i - from + 1) .. ' is beyond ' .. MAX_DUE_MS) end
    if #list > 0 and ms <= list[#list].ms then fail('instants must be strictly ascending') end
    list[#list + 1] = {ms = ms, loc = loc}
  end
  if #list > RECUR_MAX_UPCOMING then fail('at most ' .. RECUR_MAX_UPCOMING .. ' instants per call') end
  return list
end

-- The definition fields of expiry_v2_recur_set from n name, value pairs at ARGV[from..], checked.
local function parse_recur_spec(args, from, n, ns)
  local spec = {}
  for i = 0, n - 1 do
    local name, value = args[from + 2 * i], args[from + 2 * i + 1]
    if name == nil or value == nil then fail('missing definition field #' .. (i + 1)) end
    if not RECUR_FIELDS[name] then fail('unknown definition field ' .. string.sub(name, 1, 40)) end
    spec[name] = value
  end
  if spec.rule == nil or spec.rule == '' or #spec.rule > 256 then fail('rule must be 1..256 bytes') end
  if spec.tz == nil or spec.tz == '' or #spec.tz > 64 then fail('tz must be 1..64 bytes') end
  spec.misfire = spec.misfire or 'once'
  if not RECUR_POLICIES[spec.misfire] then fail('misfire must be skip, once or all') end
  spec.grace_ms = ms_string(parse_ms(spec.grace_ms or '1000', 'grace_ms'))
  spec.misfire_max = ms_string(parse_ms(spec.misfire_max or '100', 'misfire_max'))
  for _, name in ipairs({'start_ms', 'end_ms', 'max_late_ms'}) do
    if spec[name] ~= nil and spec[name] ~= '' then spec[name] = ms_string(parse_ms(spec[name], name)) end
  end
  spec.payload = spec.payload or ''
  if #spec.payload > MAX_PAYLOAD_BYTES then fail('payload larger than 65536 bytes') end
  if spec.stream ~= nil and spec.stream ~= '' and in_task_key_space(spec.stream, ns) then
    fail('stream ' .. spec.stream .. ' lies inside the task key space ' .. ns .. ':{B}:; choose another name')
  end
  if spec.webhook ~= nil and spec.webhook ~= '' then
    local problem = webhook_problem(spec.webhook)
    if problem then fail(problem) end
  end
  return spec
end

local function require_recur_permissions(schedule_key, prefix, id)
  local trigger, shadow = task_keys(prefix, id)
  require_permission('ZADD', schedule_key, '0', id)
  require_permission('DEL', trigger, shadow)
  require_permission('HSET', shadow, 'payload', '')
  require_permission('SET', trigger, '1')
  require_permission('HSET', recur_key(prefix, id), 'fired', '')
  require_permission('ZADD', recur_next_key(prefix, id), '0', 'x')
  require_permission('SADD', recur_index_key(prefix), id)
  require_permission('ZADD', recur_refill_key(prefix), '0', id)
  require_permission('PUBLISH', wake_channel(prefix), '0')
end

-- The armed occurrence of schedule `id`: its due time, or nil when its task is not pending.
-- Fails when the id is a pending one-off task (not an occurrence).
local function armed_occurrence(schedule_key, shadow, id)
  local score = redis.call('ZSCORE', schedule_key, id)
  if not score then return nil end
  if key_type(shadow) == 'hash' and redis.call('HGET', shadow, 'recur') ~= '1' then
    fail('task ' .. id_for_message(id) .. ' is a pending one-off task, not a recurring schedule; cancel it or ' ..
         'choose another id (nothing was written)')
  end
  return tonumber(score)
end

-- Adds instants (ascending) to schedule `id`'s ZSET of them, up to RECUR_MAX_UPCOMING in all;
-- returns the count held and the last instant added (nil: none).
local function store_instants(prefix, id, instants)
  local key = recur_next_key(prefix, id)
  local room = RECUR_MAX_UPCOMING - redis.call('ZCARD', key)
  local args, last = {}, nil
  for i = 1, math.min(#instants, room) do
    args[#args + 1] = instants[i].ms
    args[#args + 1] = instant_member(instants[i])
    last = instants[i].ms
  end
  if #args > 0 then redis.call('ZADD', key, unpack(args)) end
  return redis.call('ZCARD', key), last
end

-- Removes the armed occurrence of schedule `id` (its task), if any.
local function disarm(schedule_key, trigger, shadow, id)
  redis.call('ZREM', schedule_key, id)
  redis.call('DEL', trigger, shadow)
end

-- Publishes the wake for an occurrence armed at `due` when it is earlier than the bucket's head
-- before the call (`head`, ZRANGE 0 0 WITHSCORES).
local function wake_if_earlier(prefix, head, due, db)
  if due ~= nil and (head[1] == nil or due < tonumber(head[2])) then
    redis.call('PUBLISH', wake_channel(prefix), wake_message(due, db))
  end
end

-- expiry_v2_recur_set KEYS: schedule, trigger, shadow, definition (NS:{B}:recur:<id>)
--                     ARGV: id, db ('' for none), n, then n field name, value pairs (rule, tz
--                           required; start_ms, end_ms, payload, stream, webhook, max_late_ms,
--                           misfire, grace_ms, misfire_max), then the next instants
--                           "<utc_ms>|<local ISO-8601>" ascending (computed from the rule)
-- Creates or atomically replaces a recurring schedule. An occurrence already due keeps its
-- place and fires under the old rule; a future one is replaced by the first new instant after
-- the last occurrence fired, so a change neither doubles nor skips one. A pause is kept.
-- Returns {version, armed_ms (-1: none armed), upcoming, replaced (0|1)}.
local function recur_set(keys, args)
  local id = args[1]
  local prefix, ns = check_recur_keys(keys, id)
  served_prefix_of(keys[1])
  local db = parse_db(args[2])
  local n = tonumber(args[3])
  if n == nil or n ~= math.floor(n) or n < 2 or n > 11 then fail('the field pair count must be 2..11') end
  local spec = parse_recur_spec(args, 4, n, ns)
  local instants = parse_instants(args, 4 + 2 * n)
  require_recur_permissions(keys[1], prefix, id)
  local now = now_ms()
  local armed = armed_occurrence(keys[1], keys[3], id)
  local old = load_recur(prefix, id)
  if old == MIGRATING then fail('migrating: the slot of ' .. keys[4] .. ' is moving; retry (nothing was written)') end
  local head = redis.call('ZRANGE', keys[1], 0, 0, 'WITHSCORES')
  local after = old and tonumber(old.last_ms or '') or -1
  local keep_armed = armed ~= nil and armed <= now
  if keep_armed then
    after = math.max(after, tonumber(redis.call('HGET', keys[3], 'occurrence_ms') or '') or armed)
  elseif armed ~= nil then
    disarm(keys[1], keys[2], keys[3], id)
  end
  local fields = {'version', ms_string((old and tonumber(old.version or '') or 0) + 1),
                  'created_ms', old and old.created_ms or ms_string(now), 'paused', old and old.paused or '0',
                  'fired', old and old.fired or '0', 'skipped', old and old.skipped or '0',
                  'last_ms', old and old.last_ms or '', 'catchup_run', '0',
                  'horizon_ms', #instants > 0 and ms_string(instants[#instants].ms) or ''}
  for name in pairs(RECUR_FIELDS) do
    fields[#fields + 1] = name
    fields[#fields + 1] = spec[name] or ''
  end
  if #instants == 0 then
    fields[#fields + 1] = 'ended'
    fields[#fields + 1] = '1'
  end
  redis.call('DEL', keys[4], recur_next_key(prefix, id))
  redis.call('HSET', keys[4], unpack(fields))
  redis.call('SADD', recur_index_key(prefix), id)
  redis.call('ZREM', recur_refill_key(prefix), id)
  local kept = {}
  for _, inst in ipairs(instants) do if inst.ms > after then kept[#kept + 1] = inst end end
  store_instants(prefix, id, kept)
  local def = load_recur(prefix, id)
  local armed_at = nil
  if keep_armed then
    save_recur_state(prefix, id, def)
    armed_at = armed
  else
    local inst = arm_next(prefix, keys[1], id, def, now, after, false)
    armed_at = inst and inst.ms
    wake_if_earlier(prefix, head, armed_at, db)
  end
  return {tonumber(fields[2]), armed_at or -1, redis.call('ZCARD', recur_next_key(prefix, id)), old and 1 or 0}
end

-- expiry_v2_recur_get KEYS: schedule, definition  ARGV: id
-- The definition as a flat name, value list (its stored fields), then armed_ms and armed_local
-- (the pending occurrence, '' when none); {} when there is no such schedule.
local function recur_get(keys, args)
  local id = args[1]
  check_id(id)
  local prefix = prefix_of(keys[1])
  if keys[2] ~= recur_key(prefix, id) then fail('keys do not match the layout NS:{B}:schedule NS:{B}:recur:<id>') end
  local h = redis.call('HGETALL', keys[2])
  if #h == 0 then return {} end
  local _, shadow = task_keys(prefix, id)
  local score = redis.call('ZSCORE', keys[1], id)
  local loc = score and redis.call('HGET', shadow, 'occurrence_local') or ''
  h[#h + 1] = 'armed_ms'
  h[#h + 1] = score and ms_string(tonumber(score)) or ''
  h[#h + 1] = 'armed_local'
  h[#h + 1] = loc or ''
  h[#h + 1] = 'upcoming'
  h[#h + 1] = ms_string(redis.call('ZCARD', recur_next_key(prefix, id)))
  return h
end

-- expiry_v2_recur_list KEYS: schedule  ARGV: cursor ('0' to start), count
-- One SSCAN step over the bucket's recurring schedule ids: {next_cursor ('0': done), {id...}}.
local function recur_list(keys, args)
  local prefix = prefix_of(keys[1])
  local count = tonumber(args[2] or '100')
  if count == nil or count < 1 or count > 10000 then fail('count must be 1..10000') end
  return redis.call('SSCAN', recur_index_key(prefix), args[1] or '0', 'COUNT', count)
end

-- expiry_v2_recur_delete KEYS: schedule, trigger, shadow, definition  ARGV: id
-- Deletes the schedule and its pending occurrence. Returns 1, or 0 when there was none.
local function recur_delete(keys, args)
  local id = args[1]
  local prefix = check_recur_keys(keys, id)
  require_recur_permissions(keys[1], prefix, id)
  if redis.call('EXISTS', keys[4]) == 0 then return 0 end
  if armed_occurrence(keys[1], keys[3], id) then disarm(keys[1], keys[2], keys[3], id) end
  redis.call('DEL', keys[4], recur_next_key(prefix, id))
  redis.call('SREM', recur_index_key(prefix), id)
  redis.call('ZREM', recur_refill_key(prefix), id)
  return 1
end

-- expiry_v2_recur_pause KEYS: schedule, trigger, shadow, definition  ARGV: id
-- Pauses the schedule: its pending occurrence is removed and none is armed until resume.
-- Returns {exists (0|1), changed (0|1: it was running)}.
local function recur_pause(keys, args)
  local id = args[1]
  local prefix = check_recur_keys(keys, id)
  require_recur_permissions(keys[1], prefix, id)
  local paused = redis.call('HGET', keys[4], 'paused')
  if not paused then return {0, 0} end
  if paused == '1' then return {1, 0} end
  if armed_occurrence(keys[1], keys[3], id) then disarm(keys[1], keys[2], keys[3], id) end
  redis.call('HSET', keys[4], 'paused', '1', 'updated_ms', ms_string(now_ms()))
  redis.call('ZREM', recur_refill_key(prefix), id)
  return {1, 1}
end

-- expiry_v2_recur_resume KEYS: schedule, trigger, shadow, definition
--                        ARGV: id, db ('' for none), then the next instants from now (as for set)
-- Resumes a paused schedule: the occurrences that fell in the pause are not fired (it continues
-- with the first instant after now). Returns {exists (0|1), changed (0|1), armed_ms (-1: none)}.
local function recur_resume(keys, args)
  local id = args[1]
  local prefix = check_recur_keys(keys, id)
  local db = parse_db(args[2])
  local instants = parse_instants(args, 3)
  require_recur_permissions(keys[1], prefix, id)
  local def = load_recur(prefix, id)
  if def == MIGRATING then fail('migrating: the slot of ' .. keys[4] .. ' is moving; retry (nothing was written)') end
  if def == nil then return {0, 0, -1} end
  if def.paused ~= '1' then
    local score = redis.call('ZSCORE', keys[1], id)
    return {1, 0, score and tonumber(score) or -1}
  end
  local now = now_ms()
  local head = redis.call('ZRANGE', keys[1], 0, 0, 'WITHSCORES')
  def.paused = '0'
  def.ended = #instants == 0 and '1' or nil
  local fields = {'paused', '0', 'catchup_run', '0'}
  if #instants > 0 then
    fields[#fields + 1] = 'horizon_ms'
    fields[#fields + 1] = ms_string(instants[#instants].ms)
  end
  redis.call('HSET', keys[4], unpack(fields))
  if def.ended then redis.call('HSET', keys[4], 'ended', '1') else redis.call('HDEL', keys[4], 'ended') end
  redis.call('DEL', recur_next_key(prefix, id))
  store_instants(prefix, id, instants)
  local inst = arm_next(prefix, keys[1], id, def, now, math.max(tonumber(def.last_ms or '') or -1, now - 1), false)
  wake_if_earlier(prefix, head, inst and inst.ms, db)
  return {1, 1, inst and inst.ms or -1}
end

-- expiry_v2_recur_refills KEYS: schedule  ARGV: limit (1..1000)
-- The bucket's schedules waiting for more instants (NS:{B}:recur_refill), earliest asked first,
-- for a relay to compute: {now_ms, {{id, version, rule, tz, start_ms, end_ms, horizon_ms,
-- misfire, grace_ms, misfire_max, upcoming, armed (0|1), last_ms}...}}. Deleted and paused
-- schedules are dropped from the set, not returned.
local function recur_refills(keys, args)
  local prefix = prefix_of(keys[1])
  local limit = tonumber(args[1])
  if limit == nil or limit < 1 or limit > 1000 then fail('limit must be 1..1000') end
  local now = now_ms()
  local rows = {}
  for _, id in ipairs(redis.call('ZRANGE', recur_refill_key(prefix), 0, limit - 1)) do
    local def = load_recur(prefix, id)
    if def == nil or def == MIGRATING or def.paused == '1' then
      if def ~= MIGRATING then redis.call('ZREM', recur_refill_key(prefix), id) end
    else
      rows[#rows + 1] = {id, def.version or '0', def.rule or '', def.tz or '', def.start_ms or '', def.end_ms or '',
                         def.horizon_ms or '', def.misfire or 'once', def.grace_ms or '1000', def.misfire_max or '100',
                         redis.call('ZCARD', recur_next_key(prefix, id)), redis.call('ZSCORE', keys[1], id) and 1 or 0,
                         def.last_ms or ''}
    end
  end
  return {now, rows}
end

-- expiry_v2_recur_refill KEYS: schedule, trigger, shadow, definition
--                        ARGV: id, version, db ('' for none), then instants (as for set)
-- Appends the instants after the schedule's horizon (a relay computed them from its rule after
-- horizon_ms; a call for an older version, or repeated, changes nothing), and arms an
-- occurrence if none is pending (the misfire policy applies to missed instants; once keeps the
-- latest missed as the catch-up). No instant at all marks the rule ended (none after the
-- horizon): the instants left still fire, and no refill is asked again. Returns
-- {status (1 refilled, 0 no such schedule, paused, or another version), armed_ms (-1), upcoming}.
local function recur_refill(keys, args)
  local id, version = args[1], args[2]
  local prefix = check_recur_keys(keys, id)
  local db = parse_db(args[3])
  local instants = parse_instants(args, 4)
  require_recur_permissions(keys[1], prefix, id)
  local def = load_recur(prefix, id)
  if def == MIGRATING then fail('migrating: the slot of ' .. keys[4] .. ' is moving; retry (nothing was written)') end
  local key = recur_next_key(prefix, id)
  if def == nil or def.paused == '1' or def.version ~= version then
    if def == nil or def.paused == '1' then redis.call('ZREM', recur_refill_key(prefix), id) end
    return {0, -1, redis.call('ZCARD', key)}
  end
  local now = now_ms()
  local horizon = tonumber(def.horizon_ms or '') or -1
  local after = {}
  for _, inst in ipairs(instants) do
    if inst.ms > horizon then after[#after + 1] = inst end
  end
  local count, last = store_instants(prefix, id, after)
  if last then redis.call('HSET', keys[4], 'horizon_ms', ms_string(last)) end
  if #instants == 0 then
    -- The rule has no instant after the horizon (its end passed): no more refills.
    def.ended = '1'
    redis.call('HSET', keys[4], 'ended', '1')
  end
  redis.call('ZREM', recur_refill_key(prefix), id)
  local armed = armed_occurrence(keys[1], keys[3], id)
  if armed then return {1, armed, count} end
  local head = redis.call('ZRANGE', keys[1], 0, 0, 'WITHSCORES')
  local inst = arm_next(prefix, keys[1], id, def, now, tonumber(def.last_ms or '') or -1, true)
  wake_if_earlier(prefix, head, inst and inst.ms, db)
  return {1, inst and inst.ms or -1, redis.call('ZCARD', key)}
end
