-- The relays' claims: one task on its expired event (claim), and the due tasks of a bucket
-- (sweep). Both forward through forward(), so both keep the claim invariant (keys.lua).

-- One sweep call stops claiming after this much time (checked every SWEEP_CHECK_EVERY tasks) and
-- reports the rest as still due, so the relay calls again. The limit on tasks alone would not
-- bound how long Redis is blocked: what a claim costs varies by machine and grows with the key
-- count (docs/benchmarks.md, "Figures behind the library's limits").
local SWEEP_BUDGET_US = 2000
local SWEEP_CHECK_EVERY = 8
local SWEEP_CHUNK = 128

-- The lateness limit and dead-letter stream of a claim or sweep: ARGV max_late_ms (absent: 0, no
-- limit but the tasks' own) and the optional dead-stream key after the stream key (absent:
-- dead_stream_of the stream).
local function claim_limits(max_late_arg, stream, dead_key)
  local max_late = 0
  if max_late_arg ~= nil then max_late = parse_ms(max_late_arg, 'max_late_ms') end
  return {max_late = max_late, default_dead = dead_key or dead_stream_of(stream)}
end

-- expiry_v2_claim KEYS: schedule, trigger, shadow, stream[, dead_stream]
--                 ARGV: id, via, group[, max_late_ms (absent: 0)]
-- Forwards one task if it is in the schedule and due, and its bucket is not paused; a task later
-- than its own limit, else than max_late_ms (0: no limit), is dead-lettered instead. Returns
-- {outcome, entry_id, lateness_ms, due_ms, paused_until_ms}, five elements whatever happened:
--   outcome          1 forwarded, 2 dead-lettered late, 0 not pending (claimed already,
--                    cancelled) or a recurring occurrence its misfire policy skipped, -1 not
--                    yet due, -2 held by a pause of its bucket;
--   entry_id         the stream entry (1) or the dead letter (2); '' otherwise;
--   lateness_ms      (1, 2) fired - due; -1 when lateness does not apply (a task already due when
--                    it was scheduled) and for the other outcomes;
--   due_ms           the task's due time; -1 when it is not pending;
--   paused_until_ms  (-2) the end of the pause, 0 until resumed; -1 otherwise.
local function claim(keys, args)
  local id, via, group = args[1], args[2], args[3]
  check_id(id)
  local prefix, ns = check_task_keys(keys, id)
  check_default_stream(keys[4], ns)
  local limits = claim_limits(args[4], keys[4], keys[5])
  local score = redis.call('ZSCORE', keys[1], id)
  if not score then return {0, '', -1, -1, -1} end
  local due = tonumber(score)
  local now = now_ms()
  if due > now then return {-1, '', -1, clamp_ms(due), -1} end
  local untl = paused_until(prefix, now)
  if untl == MIGRATING then
    fail('migrating: the slot of ' .. paused_key(prefix) .. ' is moving to another node; nothing was written, retry')
  end
  if untl ~= nil then return {-2, '', -1, clamp_ms(due), untl} end
  local ctx = claim_context(keys[1], prefix, ns, now, via, keys[4], group, nil, nil, limits)
  local entry_id, lateness, dead = forward(ctx, id, due)
  if entry_id == SKIPPED then return {0, '', -1, -1, -1} end  -- a missed occurrence dropped: nothing forwarded
  if entry_id == MIGRATING then
    fail('migrating: a key of task ' .. id .. ' is moving to another node; nothing was written, retry')
  end
  ring_doorbell(ctx)  -- doorbell.lua: on a cluster, wake the bucket's consumers
  return {dead and 2 or 1, entry_id, lateness, clamp_ms(due), -1}
end

-- expiry_v2_sweep KEYS: schedule, stream[, dead_stream]
--                 ARGV: limit, via, group[, max_late_ms (absent: 0)]
-- Forwards up to `limit` due tasks, earliest first, for at most about SWEEP_BUDGET_US, unless
-- the bucket is paused (then it claims nothing). A task later than its limit (as for claim) is
-- dead-lettered instead, counted in `late` and not in forwarded nor in the lateness list.
-- Returns nine elements:
-- {forwarded, next_due_ms, now_us, pending, overdue, {lateness_ms of each forwarded task, -1 for
-- a task already due when scheduled}, migrating, paused_until_ms, late}:
-- next_due_ms is the earliest due time clamped into 0..MAX_DUE_MS, -1 when the schedule is
-- empty; while paused, the end of a timed pause (or the earliest due time, if later), -1 for a
-- pause until resumed. now_us is the Redis clock in microseconds at the end of the call (at its
-- start on servers that freeze TIME during a call, docs/servers.md), so relays can arm their
-- timers precisely; next_due_ms <= now_us / 1000 means more are already due. pending and
-- overdue count what is left. migrating is 1 when the sweep stopped at a task
-- whose keys are moving to another node (nothing was written for it: sweep again once the slot
-- has moved), else 0. paused_until_ms is -1 when not paused, 0 for a pause until resumed.
local function sweep(keys, args)
  local limit = tonumber(args[1])
  if limit == nil or limit < 1 or limit > 10000 then fail('sweep limit must be 1..10000') end
  local via, group = args[2], args[3]
  local prefix, ns = prefix_of(keys[1])
  check_default_stream(keys[2], ns)
  local limits = claim_limits(args[4], keys[2], keys[3])
  local started_us = now_us()
  local budget_started_us = budget_clock_us()
  local now = math.floor(started_us / 1000)
  local first = redis.call('ZRANGE', keys[1], 0, 0, 'WITHSCORES')
  -- The reply's tail: paused_until (-1: not paused) and the count dead-lettered late.
  local function reply(r, untl, late)
    r[8] = untl or -1
    r[9] = late
    return r
  end
  if first[1] == nil or tonumber(first[2]) > now then
    -- Nothing is due: an idle relay's periodic sweep costs Redis TIME, ZRANGE and ZCARD only.
    return reply({0, first[1] ~= nil and clamp_ms(tonumber(first[2])) or -1, started_us, redis.call('ZCARD', keys[1]),
                  0, {}, 0}, nil, 0)
  end
  local untl = paused_until(prefix, now)
  if untl == MIGRATING then
    return reply({0, clamp_ms(tonumber(first[2])), started_us, redis.call('ZCARD', keys[1]),
                  redis.call('ZCOUNT', keys[1], '-inf', now), {}, 1}, nil, 0)
  end
  if untl ~= nil then
    -- Held: nothing is claimed; the next look is due when a timed pause ends (a resume wakes the
    -- relays), so a paused bucket costs one call per sweep period.
    local next_due = untl > 0 and math.max(clamp_ms(tonumber(first[2])), untl) or -1
    return reply({0, next_due, started_us, redis.call('ZCARD', keys[1]), redis.call('ZCOUNT', keys[1], '-inf', now), {},
                  0}, untl, 0)
  end
  local default_type = key_type(keys[2])
  if default_type ~= 'stream' and default_type ~= 'none' then
    fail('stream key ' .. keys[2] .. ' holds a ' .. default_type .. ', not a stream; nothing was claimed')
  end
  local lateness = {}
  local dead_count = 0
  local skipped = 0  -- recurring occurrences their misfire policy dropped
  local ctx = nil
  local out_of_time = false
  local migrating = false
  -- Due members are read SWEEP_CHUNK at a time (each claim removes its member, so the next
  -- chunk starts at offset 0 again): a large limit cut short by the time budget reads no more
  -- than it claims.
  while #lateness + dead_count + skipped < limit and not out_of_time and not migrating do
    local want = math.min(SWEEP_CHUNK, limit - #lateness - dead_count - skipped)
    local due = redis.call('ZRANGEBYSCORE', keys[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, want)
    if #due == 0 then break end
    ctx = ctx or claim_context(keys[1], prefix, ns, now, via, keys[2], group, {[keys[2]] = default_type}, on_cluster(),
                               limits)
    for i = 1, #due, 2 do
      local entry_id, late, dead = forward(ctx, due[i], tonumber(due[i + 1]))
      if entry_id == MIGRATING then
        migrating = true
        break
      end
      if entry_id == SKIPPED then
        skipped = skipped + 1
      elseif dead then
        dead_count = dead_count + 1
      else
        lateness[#lateness + 1] = late
      end
      local claimed = #lateness + dead_count + skipped
      if claimed % SWEEP_CHECK_EVERY == 0 and budget_clock_us() - budget_started_us >= SWEEP_BUDGET_US then
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
    local score = tonumber(head[2])
    if score <= now then overdue = redis.call('ZCOUNT', keys[1], '-inf', now) end
    next_due = clamp_ms(score)
  end
  local pending = redis.call('ZCARD', keys[1])
  -- The clock when the reply leaves, not when the sweep began: a relay arms its timer from it
  -- on receipt, and a batch can take milliseconds.
  ring_doorbell(ctx, ctx ~= nil and ctx.cluster)  -- doorbell.lua: on a cluster, wake the bucket's consumers
  return reply({#lateness, next_due, now_us(), pending, overdue, lateness, migrating and 1 or 0}, nil, dead_count)
end
