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
-- upcoming ("<ms>|<local>,..." ascending), horizon_ms (the last instant ever listed), last_ms (the
-- last occurrence fired or skipped), catchup_run (catch-ups fired in a row, for misfire_max),
-- fired, skipped, created_ms, updated_ms.

-- A relay is asked for more instants when fewer than this many are left.
local RECUR_LOW = 8
-- The most instants one definition holds.
local RECUR_MAX_UPCOMING = 256
local RECUR_POLICIES = {skip = true, once = true, all = true}

-- "<ms>|<local>,..." as a list of {ms = number, loc = string}.
local function parse_upcoming(text)
  local list = {}
  for ms, loc in string.gmatch(text or '', '(%d+)|([^,]*)') do list[#list + 1] = {ms = tonumber(ms), loc = loc} end
  return list
end

local function format_upcoming(list, from)
  local parts = {}
  for i = from or 1, #list do parts[#parts + 1] = ms_string(list[i].ms) .. '|' .. list[i].loc end
  return table.concat(parts, ',')
end

-- The definition of recurring schedule `id` as a table of its fields plus `list` (its upcoming
-- instants), or nil when there is none; MIGRATING when its key is on another node.
local function load_recur(prefix, id)
  local ok, h = pcall(redis.call, 'HGETALL', recur_key(prefix, id))
  if not ok then
    if is_elsewhere(h) then return MIGRATING end
    fail('cannot read ' .. recur_key(prefix, id) .. ': ' .. tostring(h))
  end
  if #h == 0 then return nil end
  local def = {}
  for i = 1, #h, 2 do def[h[i]] = h[i + 1] end
  def.list = parse_upcoming(def.upcoming)
  return def
end

local function def_number(def, name, default)
  return tonumber(def[name] or '') or default
end

-- Writes the definition's changed state back: its upcoming instants and counters.
local function save_recur_state(prefix, id, def, now)
  redis.call('HSET', recur_key(prefix, id), 'upcoming', format_upcoming(def.list), 'last_ms', def.last_ms or '',
             'catchup_run', ms_string(def_number(def, 'catchup_run', 0)), 'fired', ms_string(def_number(def, 'fired', 0)),
             'skipped', ms_string(def_number(def, 'skipped', 0)), 'updated_ms', ms_string(now))
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

-- Arms the next occurrence of schedule `id` (whose task is not pending) from its upcoming
-- instants: drops those at or before `after`, then the missed ones (more than grace_ms before
-- now) its misfire policy does not fire: all of them for skip, for all once misfire_max
-- catch-ups fired in a row, and for once every one but the latest when `keep_latest_missed`
-- (no catch-up was fired for this outage yet; the claim fires that one as the catch-up).
-- Nothing is armed while the schedule is paused, or when no instant is left (a refill is asked
-- for; it arms one). Asks for a refill when fewer than RECUR_LOW instants are left. Returns the
-- armed instant or nil. Saves the definition's state.
local function arm_next(prefix, schedule_key, id, def, now, after, keep_latest_missed)
  local list = def.list
  local i = 1
  while i <= #list and list[i].ms <= after do i = i + 1 end
  local armed = nil
  if def.paused ~= '1' then
    local cutoff = now - def_number(def, 'grace_ms', 1000)
    local policy = def.misfire
    local catching_up = policy == 'all' and def_number(def, 'catchup_run', 0) < def_number(def, 'misfire_max', 100)
    if not catching_up then
      local first_missed, latest_missed = i, nil
      while i <= #list and list[i].ms < cutoff do
        latest_missed = i
        i = i + 1
      end
      if latest_missed and policy == 'once' and keep_latest_missed then i = latest_missed end
      count_skipped(def, i - first_missed)
    end
    armed = list[i]
    if armed then
      write_occurrence(prefix, schedule_key, id, def, armed, now)
      i = i + 1
    end
  end
  local left = {}
  for j = i, #list do left[#left + 1] = list[j] end
  def.list = left
  save_recur_state(prefix, id, def, now)
  if def.paused ~= '1' and #left < RECUR_LOW and def.ended ~= '1' then request_refill(prefix, id, now) end
  return armed
end

-- What a claim does with a due occurrence of schedule `def` whose nominal time is `nominal`:
-- 'fire' on time, 'catch_up' (missed, fired by the policy), or 'skip'. For once, the catch-up
-- is the latest missed instant known: returns it as the occurrence to fire (and drops the
-- instants up to it, counted as skipped), else the armed one.
local function occurrence_decision(def, nominal, loc, now)
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
  local latest, dropped = nil, 0
  for j = 1, #def.list do
    local inst = def.list[j]
    if inst.ms > nominal and inst.ms < cutoff then
      if latest then dropped = dropped + 1 end
      latest = inst
    end
  end
  if latest then
    count_skipped(def, dropped + 1)  -- the armed one and those between it and the latest
    return 'catch_up', latest.ms, latest.loc
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
