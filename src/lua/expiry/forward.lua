-- Forwarding one due task: forward() and what it needs, keeping the claim invariant (keys.lua).

-- Whether the bucket of key prefix `prefix` is paused at `now` (NS:{B}:paused, written by
-- expiry_pause): nil when not, 0 when until resumed, else the end of the pause (ms). A pause
-- whose end has come counts as over even before its key expires. On a cluster whose slot is
-- being migrated the key may be elsewhere: then MIGRATING, since a pause cannot be ruled out.
local function paused_until(prefix, now)
  local key = paused_key(prefix)
  local ok, value = pcall(redis.call, 'GET', key)
  if not ok then
    if is_elsewhere(value) then return MIGRATING end
    fail('cannot read ' .. key .. ': ' .. tostring(value) .. '; nothing was claimed')
  end
  if not value then return nil end
  local untl = tonumber(value) or 0
  if untl > 0 and untl <= now then return nil end
  return untl
end

-- What one claiming call checks once rather than per task: the clock, whether keys can be
-- elsewhere (a cluster), and each stream's type and permissions (the keys a call touches only
-- change through its own writes, which keep the cache up to date). Built by claim_context, used
-- by forward. `types` may hold stream types the caller has already read. `cluster` false says
-- no key can be elsewhere (a call claiming many tasks asks on_cluster once; one claim skips it).
-- `limits` holds the lateness limit for tasks without their own (max_late, 0: none) and the
-- default stream's dead-letter stream (default_dead).
local function claim_context(schedule_key, prefix, ns, now, via, default_stream, group, types, cluster, limits)
  require_permission('ZREM', schedule_key, 'id')
  local _, _, tag = prefix_of(schedule_key)
  return {schedule_key = schedule_key, prefix = prefix, ns = ns, tag = tag, now = now, fired = ms_string(now), via = via,
          default_stream = default_stream, group = group, cluster = cluster ~= false,
          max_late = limits.max_late, default_dead = limits.default_dead,
          types = types or {},  -- stream key -> TYPE as of now in this call
          writable = {},  -- stream key -> true once XADD (and XGROUP CREATE if new) are permitted
          ready = {}}  -- stream key -> true once an XADD to it succeeded in this call: no checks left
end

-- The type of `stream` (cached), or nil and Redis's error when the key cannot be read here: on
-- a cluster, a key in another slot or on another node (declared keys never fail this way).
local function stream_type(ctx, stream)
  local t = ctx.types[stream]
  if t == nil then
    local ok, reply = pcall(redis.call, 'TYPE', stream)
    if not ok then return nil, reply end
    t = reply['ok']
    ctx.types[stream] = t
  end
  return t
end

-- Why `stream` cannot take a task's entry, known without writing: it lies in the task key
-- space, the user may not write it, it holds another type, or (on a cluster) it is not in the
-- task's slot. nil when it can be tried; MIGRATING when it shares the task's hash tag but its
-- slot is being migrated. Permissions come first: reading the type of a key the user may not
-- touch would fail the call.
local function stream_problem(ctx, stream, id, grouped)
  if in_task_key_space(stream, ctx.ns) then
    return 'it lies inside the task key space ' .. ctx.ns .. ':{B}: (a schedule would delete it)'
  end
  if not ctx.writable[stream] and
     not (redis.acl_check_cmd('TYPE', stream) and redis.acl_check_cmd('XADD', stream, '*', 'id', id)) then
    return 'the Redis user may not run XADD on it (see docs/security.md)'
  end
  local kind, err = stream_type(ctx, stream)
  if kind == nil then
    if hash_tag(stream) == ctx.tag and is_elsewhere(err) then return MIGRATING end
    return 'it is not in the hash slot of the task (on Redis Cluster a per-task stream must carry the ' ..
           'task\'s hash tag ' .. ctx.tag .. ')'
  end
  if kind ~= 'stream' and kind ~= 'none' then return 'it holds a ' .. kind .. ', not a stream' end
  if not ctx.writable[stream] then
    if grouped and kind == 'none' and not redis.acl_check_cmd('XGROUP', 'CREATE', stream, ctx.group, '0', 'MKSTREAM') then
      return 'the Redis user may not run XGROUP CREATE on it (see docs/security.md)'
    end
    ctx.writable[stream] = true
  end
  return nil
end

-- Appends `entry` to `stream`, first creating it with the group if it does not exist and
-- `grouped` (a dead-letter stream gets no group). This is the first write of a claim. Returns
-- the entry id, or nil and Redis's error when a write was refused, in which case nothing was
-- written (XGROUP CREATE on a new key cannot be followed by a failing XADD: a new stream takes
-- any id).
local function append(ctx, stream, entry, grouped)
  if grouped and stream_type(ctx, stream) == 'none' then
    local ok, err = pcall(redis.call, 'XGROUP', 'CREATE', stream, ctx.group, '0', 'MKSTREAM')
    if not ok then return nil, tostring(err) end
    ctx.types[stream] = 'stream'
  end
  local ok, entry_id = pcall(redis.call, 'XADD', stream, '*', unpack(entry))
  if not ok then return nil, tostring(entry_id) end
  ctx.types[stream] = 'stream'
  return entry_id
end

-- Appends task `id`'s entry to `stream` if it can take it: the entry id, or nil and why not
-- (MIGRATING, writing nothing, when the stream's slot is being migrated).
local function try_append(ctx, stream, id, entry, grouped)
  if not ctx.ready[stream] then
    local problem = stream_problem(ctx, stream, id, grouped)
    if problem == MIGRATING then return MIGRATING end
    if problem ~= nil then return nil, problem end
  end
  local entry_id, refused = append(ctx, stream, entry, grouped)
  if entry_id == nil then return nil, 'Redis refused XADD (' .. refused .. ')' end
  ctx.ready[stream] = true
  return entry_id
end

-- The shadow hash fields a claim copies into the entry when present: attempt (set by
-- expiry_retry), traceparent and webhook (schedule options), occurrence_ms (a webhook task's
-- retries, every recurring occurrence), promoted_ms and promoted_from_ms (expiry_run_now), and a
-- recurring occurrence's recur, occurrence_local and misfire (= catch_up when fired late).
local CARRIED_FIELDS = {'attempt', 'traceparent', 'webhook', 'occurrence_ms', 'promoted_ms', 'promoted_from_ms',
                        'recur', 'occurrence_local', 'misfire'}

-- The fields of a dead letter, in the order every writer uses (a claim's late task, and a
-- consumer's expiry_dead_letter and expiry_retry): `head` (name, value pairs: why, and where the
-- entry was due), deliveries, dead_ms, then the fields of the entry it stands for (a flat name,
-- value list), or missing_entry = 1 when that entry was gone (nil).
local function dead_letter_fields(head, deliveries, dead_ms, entry)
  local dead = {}
  for i = 1, #head do dead[i] = head[i] end
  dead[#dead + 1] = 'deliveries'
  dead[#dead + 1] = deliveries
  dead[#dead + 1] = 'dead_ms'
  dead[#dead + 1] = dead_ms
  if entry == nil then
    dead[#dead + 1] = 'missing_entry'
    dead[#dead + 1] = '1'
  else
    for i = 1, #entry do dead[#dead + 1] = entry[i] end
  end
  return dead
end

-- Puts the entry of task `id`, more than `limit` ms late, into the dead letters of `target`,
-- the stream it was due in: the caller's dead stream (ctx.default_dead) for the default stream,
-- else dead_stream_of(target); when a per-task stream's dead letters cannot take it, into the
-- default stream's. The dead entry has reason "late", late_ms, max_late_ms and original_stream
-- before the entry's own fields. Returns the dead entry id, or MIGRATING (nothing written).
-- Fails, writing nothing, when none can take it: the task stays pending.
local function dead_letter_late(ctx, id, entry, target, lateness, limit)
  local dead = dead_letter_fields({'reason', 'late', 'late_ms', ms_string(lateness), 'max_late_ms', ms_string(limit),
                                   'original_stream', target, 'group', ctx.group}, '0', ctx.fired, entry)
  local first = target == ctx.default_stream and ctx.default_dead or dead_stream_of(target)
  local dead_id, problem = try_append(ctx, first, id, dead, false)
  if dead_id == nil and first ~= ctx.default_dead then
    dead_id, problem = try_append(ctx, ctx.default_dead, id, dead, false)
  end
  if dead_id == nil then
    fail('cannot dead-letter late task ' .. id .. ' to ' .. first .. ': ' .. tostring(problem) ..
         '; the task stays pending (nothing was written for it)')
  end
  return dead_id
end

-- Claims one due task, keeping the claim invariant (keys.lua). A missing or wrong-typed
-- shadow hash is forwarded with a missing_payload marker. A per-task stream that cannot take
-- the entry (wrong type, task key space, no permission, or XADD refused, e.g. its ids are
-- exhausted) is replaced by the default stream, with undeliverable_stream and
-- undeliverable_reason markers. If the default stream cannot take it either, the call fails
-- and this task stays pending (tasks claimed earlier in the same call stay forwarded).
-- A task more than its limit late (its max_late_ms field, else ctx.max_late; 0: none) goes to
-- the dead letters instead (dead_letter_late), in the same step.
-- Returns the entry id, the task's lateness in ms (-1 when lateness does not apply: the task
-- was due already when it was scheduled, or its schedule time is unknown), and true when the
-- entry is a dead letter. Returns MIGRATING, having written nothing, when a key of the task is
-- being migrated to another node.
local function forward(ctx, id, due)
  local trigger, shadow = task_keys(ctx.prefix, id)
  local fields = {}
  local ok, h = pcall(redis.call, 'HGETALL', shadow)
  if ok then
    for i = 1, #h, 2 do fields[h[i]] = h[i + 1] end
  elseif is_elsewhere(h) then
    return MIGRATING
  elseif not string.find(tostring(h), 'WRONGTYPE', 1, true) then
    fail('cannot read ' .. shadow .. ': ' .. tostring(h) .. '; task ' .. id .. ' stays pending')
  end
  -- The DEL below must not fail after the XADD: on a cluster, reach the trigger first (TYPE: a
  -- command the relay's ACL user has already, docs/security.md).
  if ctx.cluster then
    local reached, refused = pcall(redis.call, 'TYPE', trigger)
    if not reached then
      if is_elsewhere(refused) then return MIGRATING end
      fail('cannot read ' .. trigger .. ': ' .. tostring(refused) .. '; task ' .. id .. ' stays pending')
    end
  end
  require_permission('DEL', shadow, trigger)
  -- A recurring schedule's occurrence: its definition decides whether it fires (misfire
  -- policy), and its next occurrence is armed below, after the claim's writes.
  local def, decision, nominal = nil, 'fire', due
  if fields['recur'] and not fields['as_id'] then  -- as_id: a retry of an occurrence, a one-off task
    def = load_recur(ctx.prefix, id)
    if def == MIGRATING then return MIGRATING end
  end
  if def then
    require_permission('ZADD', ctx.schedule_key, '0', id)
    require_permission('HSET', shadow, 'payload', '')
    require_permission('SET', trigger, '1')
    require_permission('HSET', recur_key(ctx.prefix, id), 'fired', '')
    require_permission('ZREM', recur_next_key(ctx.prefix, id), 'x')
    local loc
    decision, nominal, loc = occurrence_decision(recur_next_key(ctx.prefix, id), def,
                                                 tonumber(fields['occurrence_ms'] or '') or due,
                                                 fields['occurrence_local'] or '', ctx.now)
    if decision == 'skip' then
      redis.call('ZREM', ctx.schedule_key, id)
      redis.call('DEL', shadow, trigger)
      settle_occurrence(ctx, id, def, decision, nominal)
      return SKIPPED
    end
    fields['due_ms'] = ms_string(nominal)
    fields['occurrence_ms'] = ms_string(nominal)
    fields['occurrence_local'] = loc
    if decision == 'catch_up' then fields['misfire'] = 'catch_up' end
  end
  local created = fields['created_ms']
  -- The entry's due time is the schedule's score (a shadow hash an earlier release wrote may hold
  -- a due_ms of its own; the score wins), or a recurring occurrence's nominal instant.
  local due_field = def and fields['due_ms'] or ms_string(due)
  local entry
  local entry_id_field = fields['as_id'] or id  -- a recurring occurrence's retry names its schedule
  if created then  -- the usual case, built at its final size
    entry = {'id', entry_id_field, 'payload', fields['payload'] or '', 'due_ms', due_field,
             'fired_ms', ctx.fired, 'via', ctx.via, 'created_ms', created}
  else
    entry = {'id', entry_id_field, 'payload', fields['payload'] or '', 'due_ms', due_field,
             'fired_ms', ctx.fired, 'via', ctx.via}
  end
  for _, name in ipairs(CARRIED_FIELDS) do
    if fields[name] then
      entry[#entry + 1] = name
      entry[#entry + 1] = fields[name]
    end
  end
  if fields['payload'] == nil then
    entry[#entry + 1] = 'missing_payload'
    entry[#entry + 1] = ok and 'absent' or 'wrongtype'
  elseif fields['missing_payload'] then  -- carried over by expiry_retry or expiry_replay_dead
    entry[#entry + 1] = 'missing_payload'
    entry[#entry + 1] = fields['missing_payload']
  end
  local stream = fields['stream']
  created = tonumber(created or '')
  local lateness = -1
  if def or (created ~= nil and created < due) then lateness = clamp_ms(ctx.now - nominal) end
  local limit = tonumber(fields['max_late_ms'] or '') or ctx.max_late
  if limit > 0 and lateness > limit then
    local dead_id = dead_letter_late(ctx, id, entry, stream or ctx.default_stream, lateness, limit)
    if dead_id == MIGRATING then return MIGRATING end
    redis.call('ZREM', ctx.schedule_key, id)
    redis.call('DEL', shadow, trigger)
    if def then settle_occurrence(ctx, id, def, decision, nominal) end
    return dead_id, lateness, true
  end
  local entry_id, problem = nil, nil
  if stream ~= nil and stream ~= ctx.default_stream then
    entry_id, problem = try_append(ctx, stream, id, entry, true)
    if entry_id == MIGRATING then return MIGRATING end
    if entry_id == nil then
      entry[#entry + 1] = 'undeliverable_stream'
      entry[#entry + 1] = stream
      entry[#entry + 1] = 'undeliverable_reason'
      entry[#entry + 1] = problem
    end
  end
  if entry_id == nil then
    entry_id, problem = try_append(ctx, ctx.default_stream, id, entry, true)
    if entry_id == MIGRATING then return MIGRATING end  -- declared keys never are; defensive
    if entry_id == nil then
      fail('cannot forward task ' .. id .. ' to stream key ' .. ctx.default_stream .. ': ' .. problem ..
           '; the task stays pending (nothing was written for it)')
    end
  end
  -- The entry is in; these writes cannot fail (the schedule's type was read by the caller).
  redis.call('ZREM', ctx.schedule_key, id)
  redis.call('DEL', shadow, trigger)
  if def then settle_occurrence(ctx, id, def, decision, nominal) end
  return entry_id, lateness, false
end
