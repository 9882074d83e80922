-- Recurring schedules: their definitions and the arming of their occurrences (docs/architecture.md,
-- "Recurring schedules"). Lua has no time zones, so occurrences are computed in C++ (src/recur/):
-- whoever writes a definition stores its next instants with it (the field `upcoming`), and a relay
-- adds more (expiry_v2_recur_refill) when fewer than RECUR_LOW are left. Each occurrence is an
-- ordinary task with the schedule's id, its shadow hash marked recur = 1 and carrying
-- occurrence_ms (UTC) and occurrence_local (local ISO-8601 with its offset). The claim that
-- forwards an occurrence arms the next in the same call (forward.lua), so relays racing for it
-- can neither skip nor double one.
--
-- Definition fields (NS:{B}:recur:<id>): rule, tz (opaque to Lua: the C++ side reads them),
-- start_ms, end_ms ('' for none), payload, stream, webhook, max_late_ms ('' or '0': the relay's
-- limit), misfire (skip | once | all), grace_ms, misfire_max, paused ('0' | '1'), version,
-- horizon_ms (the last instant ever listed), last_ms (the last occurrence fired or skipped),
-- catchup_run (catch-ups fired in a row, for misfire_max), fired, skipped, ended ('1': the rule
-- has no instant after the horizon), created_ms, updated_ms.

-- A relay is asked for more instants when fewer than this many are left.
local RECUR_LOW = 8
-- The most instants one schedule holds.
local RECUR_MAX_UPCOMING = 256
local RECUR_POLICIES = {skip = true, once = true, all = true}

-- An instant as its ZSET member "<ms>|<local>" (score: ms) and back.
local function instant_member(inst)
  return ms_string(inst.ms) .. '|' .. inst.loc
end

local function instant_of(member, score)
  return {ms = tonumber(score), loc = string.match(member, '|(.*)$') or ''}
end

-- The definition of recurring schedule `id` as a table of its fields, or nil when there is
-- none; MIGRATING when its key is on another node.
local function load_recur(prefix, id)
  local ok, h = pcall(redis.call, 'HGETALL', recur_key(prefix, id))
  if not ok then
    if is_elsewhere(h) then return MIGRATING end
    fail('cannot read ' .. recur_key(prefix, id) .. ': ' .. tostring(h))
  end
  if #h == 0 then return nil end
  local def = {}
  for i = 1, #h, 2 do def[h[i]] = h[i + 1] end
  return def
end

local function def_number(def, name, default)
  return tonumber(def[name] or '') or default
end

-- Removes the instants of `key` scored in [lo, hi] (Redis score-range syntax) and returns how
-- many (ZRANGE + ZREM: the commands the relay's user has).
local function drop_instants(key, lo, hi)
  local members = redis.call('ZRANGE', key, lo, hi, 'BYSCORE')
  if #members > 0 then redis.call('ZREM', key, unpack(members)) end
  return #members
end

-- Writes the definition's changed counters back.
local function save_recur_state(prefix, id, def)
  redis.call('HSET', recur_key(prefix, id), 'last_ms', def.last_ms or '',
             'catchup_run', ms_string(def_number(def, 'catchup_run', 0)), 'fired', ms_string(def_number(def, 'fired', 0)),
             'skipped', ms_string(def_number(def, 'skipped', 0)))
end

local function count_skipped(def, n)
  if n > 0 then def.skipped = ms_string(def_number(def, 'skipped', 0) + n) end
end

-- Asks the relays for more instants of schedule `id` (they watch NS:{B}:recur_refill and the
-- wake channel's "recur" message).
local function request_refill(prefix, id, now)
  redis.call('ZADD', recur_refill_key(prefix), 'NX', now, id)
  redis.call('PUBLISH', wake_channel(prefix), 'recur')
end

-- Writes occurrence `inst` of schedule `id` as its task: member, a fresh shadow hash, trigger.
local function write_occurrence(prefix, schedule_key, id, def, inst, now)
  local trigger, shadow = task_keys(prefix, id)
  local at = ms_string(inst.ms)
  local fields = {'payload', def.payload or '', 'due_ms', at, 'created_ms', ms_string(now), 'recur', '1',
                  'occurrence_ms', at, 'occurrence_local', inst.loc}
  for _, name in ipairs({'stream', 'webhook', 'max_late_ms'}) do
    local value = def[name]
    if value ~= nil and value ~= '' and not (name == 'max_late_ms' and value == '0') then
      fields[#fields + 1] = name
      fields[#fields + 1] = value
    end
  end
  redis.call('ZADD', schedule_key, inst.ms, id)
  redis.call('DEL', shadow)
  redis.call('HSET', shadow, unpack(fields))
  redis.call('SET', trigger, '1', 'PX', trigger_ttl(inst.ms, now))
end

-- Arms the next occurrence of schedule `id` (whose task is not pending) from its instants
-- (NS:{B}:recur_next:<id>): drops those at or before `after`, then the missed ones (more than
-- grace_ms before now) its misfire policy does not fire: all of them for skip, for all once
-- misfire_max catch-ups were fired in a row, and for once every one but the latest when
-- `keep_latest_missed` (no catch-up was fired for this outage yet; the claim fires that one as
-- the catch-up). Nothing is armed while the schedule is paused, or when no instant is left (a
-- refill is asked for; it arms one). Asks for a refill when fewer than RECUR_LOW instants are
-- left. Returns the armed instant or nil. Saves the definition's counters.
local function arm_next(prefix, schedule_key, id, def, now, after, keep_latest_missed)
  local key = recur_next_key(prefix, id)
  drop_instants(key, '-inf', after)
  local armed = nil
  if def.paused ~= '1' then
    local cutoff = now - def_number(def, 'grace_ms', 1000)
    local policy = def.misfire
    local catching_up = policy == 'all' and def_number(def, 'catchup_run', 0) < def_number(def, 'misfire_max', 100)
    if not catching_up then
      local missed = redis.call('ZRANGE', key, '-inf', '(' .. ms_string(cutoff), 'BYSCORE')
      if #missed > 0 then
        if policy == 'once' and keep_latest_missed then table.remove(missed) end  -- the latest stays
        if #missed > 0 then redis.call('ZREM', key, unpack(missed)) end
        count_skipped(def, #missed)
      end
    end
    local head = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if head[1] ~= nil then
      armed = instant_of(head[1], head[2])
      redis.call('ZREM', key, head[1])
      write_occurrence(prefix, schedule_key, id, def, armed, now)
    end
  end
  save_recur_state(prefix, id, def)
  if def.paused ~= '1' and def.ended ~= '1' and redis.call('ZCARD', key) < RECUR_LOW then
    request_refill(prefix, id, now)
  end
  return armed
end

-- What a claim does with a due occurrence of schedule `def` whose nominal time is `nominal`:
-- 'fire' on time, 'catch_up' (missed, fired by the policy), or 'skip'. For once, the catch-up
-- is the latest missed instant of `key` (the schedule's instants): returns it as the
-- occurrence to fire (the instants up to it are counted as skipped), else the armed one.
local function occurrence_decision(key, def, nominal, loc, now)
  local grace = def_number(def, 'grace_ms', 1000)
  if now - nominal <= grace then
    def.catchup_run = '0'
    return 'fire', nominal, loc
  end
  local policy = def.misfire
  if policy == 'skip' then return 'skip', nominal, loc end
  if policy == 'all' then
    local run = def_number(def, 'catchup_run', 0)
    if run >= def_number(def, 'misfire_max', 100) then return 'skip', nominal, loc end
    def.catchup_run = ms_string(run + 1)
    return 'catch_up', nominal, loc
  end
  -- once: the latest missed instant stands for all of them.
  local cutoff = now - grace
  local latest = redis.call('ZRANGE', key, '(' .. ms_string(cutoff), '(' .. ms_string(nominal), 'BYSCORE', 'REV', 'LIMIT',
                            0, 1, 'WITHSCORES')
  if latest[1] ~= nil then
    local inst = instant_of(latest[1], latest[2])
    -- The armed one and those between it and the latest are skipped (settle_occurrence drops them).
    count_skipped(def, redis.call('ZCOUNT', key, '(' .. ms_string(nominal), '(' .. ms_string(inst.ms)) + 1)
    return 'catch_up', inst.ms, inst.loc
  end
  return 'catch_up', nominal, loc
end

-- The state of a claimed occurrence after its decision: counters, last_ms, and the next armed.
local function settle_occurrence(ctx, id, def, decision, nominal)
  if decision == 'skip' then
    count_skipped(def, 1)
  else
    def.fired = ms_string(def_number(def, 'fired', 0) + 1)
  end
  def.last_ms = ms_string(nominal)
  arm_next(ctx.prefix, ctx.schedule_key, id, def, ctx.now, nominal, false)
end
