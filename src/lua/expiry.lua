#!lua name=expiry_v1
-- expiry_v1: the server-side half of the expiry-relay protocol (docs/protocol.md).
-- Every operation on a task is one of these functions, so each is atomic.
--
-- The claim invariant (expiry_claim, expiry_sweep): Redis does not roll back the writes of a
-- function that fails half-way, so after any call, returned or failed, every task is either
-- still pending (its schedule member, shadow hash and trigger key untouched) or forwarded (one
-- stream entry; member, shadow hash and trigger gone). Never both, never neither. forward()
-- keeps it: every check that can fail runs before the first write; the first write is the
-- XADD (the one write that can still fail on the data: a stream whose last id is the largest
-- possible), run under pcall; the writes after it (ZREM, DEL) cannot fail.
-- On Redis Cluster a function may touch one slot only, and the keys it does not declare (the
-- shadow hash, the trigger, a per-task stream) may have moved away while their slot migrates.
-- forward() therefore reads every undeclared key under pcall before its first write; a key
-- that is elsewhere makes the call report "migrating" and write nothing for that task. (A sweep
-- that claims asks INFO cluster once, and on a single Redis skips the read of the trigger.)
-- Key layout, for a namespace NS and bucket B (0 <= B < the count in NS:buckets, 1 if absent):
--   NS:{B}:schedule   ZSET   member = task id, score = due time (ms, Redis clock)
--   NS:{B}:t:<id>     STRING trigger key, PX = due - now + 100; its `expired` event is a hint
--   NS:{B}:task:<id>  HASH   payload, due_ms, created_ms[, stream][, attempt][, missing_payload]
--                     (attempt and missing_payload: set by a retry or a replay)
--   NS:{B}:wake       channel; the new earliest due time is published when it moves earlier,
--                     as "<due_ms>@<db>" when the caller named its database, else "<due_ms>"
--   NS:{B}:stream, NS:{B}:dead  the bucket's streams (with more than one bucket, or on a cluster)

local MAX_ID_BYTES = 256
-- The largest due time the library writes (9999-12-31T23:59:59.999Z). Scores beyond it, or
-- negative, come only from hand-written members; replies clamp them so no relay's timer
-- arithmetic can overflow.
local MAX_DUE_MS = 253402300799999
local MAX_PAYLOAD_BYTES = 65536
-- One expiry_schedule_many call takes at most this many tasks. A task costs Redis 10-20 us all
-- told (validation, ZADD, DEL, HSET, SET PX; 100-byte payloads: 51-58k tasks/s in expiry-bench's
-- bulk scenario on a busy 2-core VM), so a full call blocks Redis for 2.5-5 ms; a caller with
-- more tasks makes more calls. Larger calls saved nothing beyond the noise there (100 to 1000
-- tasks per call all within 38-58k tasks/s).
local MAX_SCHEDULE_BATCH = 250
-- ... and at most this many payload bytes in all (1000 payloads of 65536 bytes would be 64 MB
-- copied while Redis is blocked).
local MAX_SCHEDULE_BATCH_BYTES = 4 * 1024 * 1024
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

-- The key prefix "NS:{B}:" of a schedule key "NS:{B}:schedule", the namespace NS and the
-- bucket's hash tag "{B}". NS is 1..64 characters of [A-Za-z0-9_.-]; B is 0..16383 in
-- canonical form (no leading zero), so every task of a bucket shares one slot. Which bucket
-- an id belongs in (CRC16(id) mod the count in NS:buckets) is the caller's rule
-- (docs/protocol.md); writes to a bucket not below that count are refused (check_bucket_served).
local function prefix_of(schedule_key)
  local ns, bucket = string.match(schedule_key, '^([%w_%.%-]+):{(%d+)}:schedule$')
  if ns == nil or #ns > 64 then
    fail('first key must be the schedule key NS:{B}:schedule (NS: 1-64 characters of A-Z a-z 0-9 _ . -)')
  end
  if #bucket > 5 or tonumber(bucket) > 16383 or (#bucket > 1 and string.sub(bucket, 1, 1) == '0') then
    fail('bucket {' .. bucket .. '} is not a bucket number 0..16383')
  end
  return ns .. ':{' .. bucket .. '}:', ns, '{' .. bucket .. '}'
end

-- Fails unless bucket `tag` ("{B}") of namespace ns is served: B is below the namespace's
-- bucket count NS:buckets (absent: 1), the buckets relays sweep. A task in any other bucket would
-- be accepted and never fire (a producer that computed its bucket with a cluster's count against
-- a single Redis). Bucket 0 is always served. The count is read where it can be: on a cluster
-- NS:buckets lives in another slot, and a caller may lack the right to read it; then the call goes
-- on (expiry-ctl check reports tasks in unserved buckets).
local function check_bucket_served(ns, tag)
  local bucket = tonumber(string.sub(tag, 2, -2))
  if bucket == 0 then return end
  local key = ns .. ':buckets'
  if not redis.acl_check_cmd('GET', key) then return end
  local ok, value = pcall(redis.call, 'GET', key)
  if not ok then return end  -- another slot: a cluster
  local count = 1
  if value then count = tonumber(value) end
  if count == nil then return end  -- not a number: the relays refuse to start with it, and say so
  if bucket >= count then
    fail('bucket ' .. tag .. ' is not served: namespace ' .. ns .. ' has ' .. ms_string(count) ..
         ' bucket(s) (' .. key .. (value and (' = ' .. value) or ' is absent: 1') .. '), so only buckets {0}..{' ..
         ms_string(count - 1) .. '} are swept; a task id belongs in bucket CRC16(id) mod ' .. ms_string(count) ..
         ' (docs/protocol.md); nothing was written')
  end
end

-- The key prefix, namespace and tag of prefix_of, for a call that writes tasks or their
-- bucket's state: fails unless the bucket is served (check_bucket_served).
local function served_prefix_of(schedule_key)
  local prefix, ns, tag = prefix_of(schedule_key)
  check_bucket_served(ns, tag)
  return prefix, ns, tag
end

-- True if `key` lies in namespace ns's bucket key space "NS:{<digits>}:...", which belongs to
-- the library (schedules, triggers, shadow hashes): a stream there would be deleted by a
-- later schedule or claim of the task whose key it shadows. The bucket's own streams
-- NS:{B}:stream and NS:{B}:dead are not in it (the same rule as src/protocol/key_layout.cpp).
local function in_task_key_space(key, ns)
  local head = ns .. ':{'
  if string.sub(key, 1, #head) ~= head then return false end
  local rest = string.match(key, '^%d+}:(.*)$', #head + 1)
  return rest ~= nil and rest ~= 'stream' and rest ~= 'dead'
end

-- The hash tag of a key as Redis Cluster reads it: the text between the first '{' and the
-- next '}', if not empty; nil when the whole key is hashed.
local function hash_tag(key)
  local tag = string.match(key, '^[^{]*(%b{})')
  if tag == nil or #tag == 2 then return nil end
  return tag
end

-- True if a pcall error says the key lives on another node, or the cluster cannot serve it
-- now: the slot is migrating (or the cluster is down), so nothing may be written.
local function is_elsewhere(err)
  local text = tostring(err)
  return string.find(text, 'non local key', 1, true) ~= nil or
         string.find(text, 'cluster is down', 1, true) ~= nil
end

-- A marker forward() returns instead of an entry id: a key of the task is being migrated.
local MIGRATING = {}

-- Code points an id must not contain besides C0 controls and DEL: C1 controls (U+0080-U+009F,
-- e.g. NEL), the line and paragraph separators U+2028/U+2029, the byte order mark U+FEFF and
-- the bidirectional controls (U+200E/F, U+202A-U+202E, U+2066-U+2069): each can break or
-- disguise a log line. The same rule as task_id_error in src/protocol/key_layout.cpp.
local function forbidden_code_point(cp)
  return (cp >= 0x80 and cp <= 0x9F) or cp == 0x2028 or cp == 0x2029 or cp == 0xFEFF or cp == 0x200E or
         cp == 0x200F or (cp >= 0x202A and cp <= 0x202E) or (cp >= 0x2066 and cp <= 0x2069)
end

-- nil if s is valid UTF-8 (no overlong forms, surrogates or code points above U+10FFFF)
-- without forbidden code points; otherwise the reason.
local function utf8_problem(s)
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
      return 'is not valid UTF-8'
    end
    if i + len - 1 > n then return 'is not valid UTF-8' end
    for k = 1, len - 1 do
      local b = string.byte(s, i + k)
      if b < 0x80 or b > 0xBF then return 'is not valid UTF-8' end
      cp = cp * 64 + (b - 0x80)
    end
    if len == 3 and (cp < 0x800 or (cp >= 0xD800 and cp <= 0xDFFF)) then return 'is not valid UTF-8' end
    if len == 4 and (cp < 0x10000 or cp > 0x10FFFF) then return 'is not valid UTF-8' end
    if forbidden_code_point(cp) then
      return string.format('contains the invisible or line-breaking character U+%04X', cp)
    end
    i = i + len
  end
  return nil
end

-- Task ids: 1..256 bytes of valid UTF-8 without control characters (the same rule as
-- task_id_error in src/protocol/key_layout.cpp).
local function check_id(id)
  if id == nil or #id == 0 then fail('empty task id') end
  if #id > MAX_ID_BYTES then fail('task id longer than 256 bytes') end
  -- One scan settles the common case, printable ASCII.
  if not string.find(id, '[%c\128-\255]') then return end
  if string.find(id, '%c') then fail('task id contains a control character') end
  local problem = utf8_problem(id)
  if problem then fail('task id ' .. problem) end
end

-- Checks that KEYS are the schedule, trigger and shadow keys of `id` (protects the layout
-- against producers that build keys by hand).
local function check_task_keys(keys, id)
  local prefix, ns = prefix_of(keys[1])
  if keys[2] ~= prefix .. 't:' .. id or keys[3] ~= prefix .. 'task:' .. id then
    fail('keys do not match the layout NS:{B}:schedule NS:{B}:t:<id> NS:{B}:task:<id>')
  end
  return prefix, ns
end

-- Fails unless `stream` may be a relay's default stream: outside the task key space.
local function check_default_stream(stream, ns)
  if in_task_key_space(stream, ns) then
    fail('stream key ' .. stream .. ' lies inside the task key space ' .. ns ..
         ':{B}: (a schedule would delete it); nothing was claimed')
  end
end

local function parse_ms(s, what)
  local n = tonumber(s)
  if n == nil or n ~= math.floor(n) or n < 0 or n > 253402300799999 then
    fail(what .. ' must be a non-negative integer number of milliseconds')
  end
  return n
end

-- nil if `tp` is a W3C trace context traceparent (version-traceid-parentid-flags, lowercase
-- hex of 2-32-16-2 digits, version not ff, ids not all zero), else the reason. The same rule
-- as traceparent_error in src/protocol/trace_context.cpp.
local function traceparent_problem(tp)
  local version, trace, parent = string.match(tp, '^(%x%x)%-(%x+)%-(%x+)%-%x%x$')
  if version == nil or #tp ~= 55 or string.find(tp, '[A-F]') then
    return 'traceparent must be W3C trace context: 2-32-16-2 lowercase hex digits joined by "-" ' ..
           '(e.g. 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01)'
  end
  if version == 'ff' then return 'traceparent version ff is invalid' end
  if not string.find(trace, '[^0]') then return 'traceparent trace id is all zeros' end
  if not string.find(parent, '[^0]') then return 'traceparent parent id is all zeros' end
  return nil
end

-- The options of one task to schedule, from a string of space-separated tokens (docs/protocol.md,
-- "Schedule options"): if_absent, debounce_max_ms=M, max_late_ms=N, traceparent=TP. '' or nil
-- gives none. Fails on an unknown or malformed token, and on if_absent with debounce_max_ms.
local function parse_task_options(s)
  local opts = {}
  if s == nil or s == '' then return opts end
  for token in string.gmatch(s, '%S+') do
    local name, value = string.match(token, '^([%w_]+)=(.*)$')
    if token == 'if_absent' then
      opts.if_absent = true
    elseif name == 'debounce_max_ms' then
      opts.debounce_max_ms = parse_ms(value, 'debounce_max_ms')
      if opts.debounce_max_ms < 1 then fail('debounce_max_ms must be at least 1') end
    elseif name == 'max_late_ms' then
      opts.max_late_ms = parse_ms(value, 'max_late_ms')
    elseif name == 'traceparent' then
      local problem = traceparent_problem(value)
      if problem then fail(problem) end
      opts.traceparent = value
    else
      fail('unknown schedule option ' .. string.sub(token, 1, 40) ..
           ' (known: if_absent, debounce_max_ms=M, max_late_ms=N, traceparent=TP)')
    end
  end
  if opts.if_absent and opts.debounce_max_ms then fail('if_absent and debounce_max_ms exclude each other') end
  return opts
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

-- A score as the library's replies carry it: hand-written members may hold any double
-- (1e16, +inf, -inf, negative); clamped into 0..MAX_DUE_MS so relays never overflow.
local function clamp_ms(x)
  if x ~= x or x < 0 then return 0 end
  if x > MAX_DUE_MS then return MAX_DUE_MS end
  return math.floor(x)
end

-- True unless this Redis says it is not a cluster node. Only on a cluster can a key the call
-- did not declare be elsewhere (its slot migrating); a user without +info is treated as on one.
local function on_cluster()
  local ok, info = pcall(redis.call, 'INFO', 'cluster')
  return not (ok and string.find(info, 'cluster_enabled:0', 1, true))
end

-- Whether the bucket of key prefix `prefix` is paused at `now` (NS:{B}:paused, written by
-- expiry_pause): nil when not, 0 when until resumed, else the end of the pause (ms). A pause
-- whose end has come counts as over even before its key expires. On a cluster whose slot is
-- being migrated the key may be elsewhere: then MIGRATING, since a pause cannot be ruled out.
local function paused_until(prefix, now)
  local ok, value = pcall(redis.call, 'GET', prefix .. 'paused')
  if not ok then
    if is_elsewhere(value) then return MIGRATING end
    fail('cannot read ' .. prefix .. 'paused: ' .. tostring(value) .. '; nothing was claimed')
  end
  if not value then return nil end
  local untl = tonumber(value) or 0
  if untl > 0 and untl <= now then return nil end
  return untl
end

-- The dead-letter stream that belongs to stream `stream`: a bucket stream NS:{B}:stream has
-- NS:{B}:dead, any other stream S has S:dead (the consumers' default, docs/protocol.md).
local function dead_stream_of(stream)
  local head = string.match(stream, '^(.*:{%d+}:)stream$')
  if head then return head .. 'dead' end
  return stream .. ':dead'
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
-- `grouped` (a dead-letter stream gets no group). This is the first write of a claim. Returns the entry id, or nil and Redis's error when a write was
-- refused, in which case nothing was written (XGROUP CREATE on a new key cannot be followed by
-- a failing XADD: a new stream takes any id).
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
-- expiry_retry), traceparent (a schedule option), promoted_ms and promoted_from_ms (expiry_run_now).
local CARRIED_FIELDS = {'attempt', 'traceparent', 'promoted_ms', 'promoted_from_ms'}

-- Puts the entry of task `id`, more than `limit` ms late, into the dead letters of `target`,
-- the stream it was due in: the caller's dead stream (ctx.default_dead) for the default stream,
-- else dead_stream_of(target); when a per-task stream's dead letters cannot take it, into the
-- default stream's. The dead entry has reason "late", late_ms, max_late_ms and original_stream
-- before the entry's own fields. Returns the dead entry id, or MIGRATING (nothing written).
-- Fails, writing nothing, when none can take it: the task stays pending.
local function dead_letter_late(ctx, id, entry, target, lateness, limit)
  local dead = {'reason', 'late', 'late_ms', ms_string(lateness), 'max_late_ms', ms_string(limit),
                'original_stream', target, 'group', ctx.group, 'deliveries', '0', 'dead_ms', ctx.fired}
  for i = 1, #entry do dead[#dead + 1] = entry[i] end
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

-- Claims one due task, keeping the claim invariant (top of file). A missing or wrong-typed
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
  local shadow = ctx.prefix .. 'task:' .. id
  local trigger = ctx.prefix .. 't:' .. id
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
  local created = fields['created_ms']
  local entry
  if created then  -- the usual case, built at its final size
    entry = {'id', id, 'payload', fields['payload'] or '', 'due_ms', fields['due_ms'] or ms_string(due),
             'fired_ms', ctx.fired, 'via', ctx.via, 'created_ms', created}
  else
    entry = {'id', id, 'payload', fields['payload'] or '', 'due_ms', fields['due_ms'] or ms_string(due),
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
  if created ~= nil and created < due then lateness = clamp_ms(ctx.now - due) end
  local limit = tonumber(fields['max_late_ms'] or '') or ctx.max_late
  if limit > 0 and lateness > limit then
    local dead_id = dead_letter_late(ctx, id, entry, stream or ctx.default_stream, lateness, limit)
    if dead_id == MIGRATING then return MIGRATING end
    redis.call('ZREM', ctx.schedule_key, id)
    redis.call('DEL', shadow, trigger)
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
  return entry_id, lateness, false
end

-- The due time of a schedule or reschedule: 'delay' counts from `now`, 'at' is absolute.
local function due_from(mode, value, now)
  if mode == 'delay' then return now + parse_ms(value, 'delay') end
  if mode == 'at' then return parse_ms(value, 'due time') end
  fail("mode must be 'delay' or 'at'")
end

-- The trigger key's TTL for a task due at `due`.
local function trigger_ttl(due, now)
  local ttl = due - now
  if ttl < 0 then ttl = 0 end
  return ms_string(ttl + TRIGGER_GRACE_MS)
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
  if trigger_key ~= ctx.prefix .. 't:' .. id or shadow_key ~= ctx.prefix .. 'task:' .. id then
    fail('keys do not match the layout NS:{B}:schedule NS:{B}:t:<id> NS:{B}:task:<id>')
  end
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

-- The largest database number a caller may name (Redis is configured with far fewer).
local MAX_DB = 1000000

-- The caller's database from an optional argument: nil when absent or '', else an integer
-- 0..MAX_DB (a function cannot see the selected database, so the caller names it).
local function parse_db(s)
  if s == nil or s == '' then return nil end
  if not string.match(s, '^%d+$') or #s > 7 or tonumber(s) > MAX_DB then
    fail('database must be an integer 0..' .. MAX_DB .. ' (got ' .. string.sub(s, 1, 32) .. '); nothing was written')
  end
  return tonumber(s)
end

-- The message published on NS:{B}:wake: "<due_ms>@<db>" naming the caller's database, so that
-- a relay serving another database of the namespace ignores it, or "<due_ms>" when db is nil.
local function wake_message(due, db)
  if db == nil then return ms_string(due) end
  return ms_string(due) .. '@' .. ms_string(db)
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
  local wake = ctx.prefix .. 'wake'
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
      local fields = {'payload', t.payload, 'due_ms', '', 'created_ms', created}
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
      fields[4] = ms_string(t.due)
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

-- expiry_schedule KEYS: schedule, trigger, shadow
--                 ARGV: id, 'delay'|'at', ms, payload[, stream ('' for none)[, db ('' for none)[, options]]]
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

-- A task id as an error message names it: control characters as \xHH, at most 64 bytes.
local function id_for_message(id)
  local shown = string.gsub(string.sub(tostring(id), 1, 64), '%c', function(c)
    return string.format('\\x%02X', string.byte(c))
  end)
  if #tostring(id) > 64 then shown = shown .. '...' end
  return shown
end

-- expiry_schedule_many KEYS: schedule, then per task: trigger, shadow
--                      ARGV: n, then per task: id, 'delay'|'at', ms, payload, stream ('' for none),
--                            then optionally db (the caller's database, named in the wake message)
--                      or ARGV: 'opts', n, then per task: those five and its options
--                            (parse_task_options; '' for none), then optionally db
-- Schedules n (0..MAX_SCHEDULE_BATCH) tasks of one bucket, each exactly as expiry_schedule
-- would, in one call. Every task is checked before the first write, so an invalid task
-- writes nothing at all; the error names it: "ERR expiry: task #<i> (id <id>): <reason>"
-- (i 1-based), or "ERR expiry: migrating: task #<i> ..." when its stream's slot is moving.
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

-- expiry_reschedule KEYS: schedule, trigger, shadow  ARGV: id, 'delay'|'at', ms[, db]
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
  require_permission('ZADD', keys[1], 'XX', '0', id)
  require_permission('HSET', keys[3], 'due_ms', '0')
  require_permission('SET', keys[2], '1')
  require_permission('PUBLISH', prefix .. 'wake', '0')
  redis.call('ZADD', keys[1], 'XX', due, id)
  if shadow_type == 'hash' then
    redis.call('HSET', keys[3], 'due_ms', ms_string(due), 'created_ms', ms_string(now))
  end
  redis.call('SET', keys[2], '1', 'PX', trigger_ttl(due, now))
  if head[1] == id or due < tonumber(head[2]) then
    redis.call('PUBLISH', prefix .. 'wake', wake_message(due, db))
  end
  return {due, now}
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

-- The lateness limit and dead-letter stream of a claim or sweep: ARGV max_late_ms (absent: the
-- caller predates limits, 0: no limit) and the optional dead-stream key after the stream key
-- (absent: dead_stream_of the stream). `modern` says the caller reads the replies of limits
-- and pauses.
local function claim_limits(max_late_arg, stream, dead_key)
  local modern = max_late_arg ~= nil
  local max_late = 0
  if modern then max_late = parse_ms(max_late_arg, 'max_late_ms') end
  return {max_late = max_late, default_dead = dead_key or dead_stream_of(stream)}, modern
end

-- expiry_claim KEYS: schedule, trigger, shadow, stream[, dead_stream]
--              ARGV: id, via, group[, max_late_ms]
-- Forwards one task if it is in the schedule and due, and its bucket is not paused. Returns
-- {1, entry_id, lateness_ms} when forwarded (lateness -1: the task was already due when
-- scheduled), {0} when it was not pending (already claimed, cancelled), {-1, due_ms} when not
-- yet due. With ARGV max_late_ms (0: no limit), a task later than its own limit or this one is
-- dead-lettered instead: {2, dead_entry_id, lateness_ms}; and a paused bucket replies
-- {-2, paused_until_ms (0: until resumed)}. Callers without it get {0} for both.
local function claim(keys, args)
  local id, via, group = args[1], args[2], args[3]
  check_id(id)
  local prefix, ns = check_task_keys(keys, id)
  check_default_stream(keys[4], ns)
  local limits, modern = claim_limits(args[4], keys[4], keys[5])
  local score = redis.call('ZSCORE', keys[1], id)
  if not score then return {0} end
  local due = tonumber(score)
  local now = now_ms()
  if due > now then return {-1, clamp_ms(due)} end
  local untl = paused_until(prefix, now)
  if untl == MIGRATING then
    fail('migrating: the slot of ' .. prefix .. 'paused is moving to another node; nothing was written, retry')
  end
  if untl ~= nil then return modern and {-2, untl} or {0} end
  local ctx = claim_context(keys[1], prefix, ns, now, via, keys[4], group, nil, nil, limits)
  local entry_id, lateness, dead = forward(ctx, id, due)
  if entry_id == MIGRATING then
    fail('migrating: a key of task ' .. id .. ' is moving to another node; nothing was written, retry')
  end
  if dead then return modern and {2, entry_id, lateness} or {0} end
  return {1, entry_id, lateness}
end

-- expiry_sweep KEYS: schedule, stream[, dead_stream]  ARGV: limit, via, group[, max_late_ms]
-- Forwards up to `limit` due tasks, earliest first, for at most about SWEEP_BUDGET_US, unless
-- the bucket is paused (then it claims nothing; next_due_ms is the end of a timed pause, -1 for
-- a pause until resumed). With max_late_ms (as for expiry_claim) a task later than its limit
-- is dead-lettered instead (not counted in forwarded nor in the lateness list), and the reply
-- has two more elements: paused_until_ms (-1: not paused, 0: until resumed) and the count
-- dead-lettered late. Returns
-- {forwarded, next_due_ms or -1, now_us, pending, overdue, {lateness_ms of each forwarded task,
-- -1 for a task already due when scheduled}, migrating}; migrating is 1 when the sweep stopped
-- at a task whose keys are moving to another node (nothing was written for it: sweep again
-- once the slot has moved), else 0; next_due_ms is clamped into 0..MAX_DUE_MS;
-- now_us is the Redis clock in microseconds at the end of the call, so relays can arm their
-- timers precisely; next_due_ms <= now_us / 1000 means more are already due. pending and overdue count what is left.
local function sweep(keys, args)
  local limit = tonumber(args[1])
  if limit == nil or limit < 1 or limit > 10000 then fail('sweep limit must be 1..10000') end
  local via, group = args[2], args[3]
  local prefix, ns = prefix_of(keys[1])
  check_default_stream(keys[2], ns)
  local limits, modern = claim_limits(args[4], keys[2], keys[3])
  local started_us = now_us()
  local now = math.floor(started_us / 1000)
  local first = redis.call('ZRANGE', keys[1], 0, 0, 'WITHSCORES')
  -- The modern reply's tail: paused_until (-1: not paused) and the count dead-lettered late.
  local function reply(r, untl, late)
    if modern then
      r[8] = untl or -1
      r[9] = late
    end
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
  local ctx = nil
  local out_of_time = false
  local migrating = false
  -- Due members are read SWEEP_CHUNK at a time (each claim removes its member, so the next
  -- chunk starts at offset 0 again): a large limit cut short by the time budget reads no more
  -- than it claims.
  while #lateness + dead_count < limit and not out_of_time and not migrating do
    local want = math.min(SWEEP_CHUNK, limit - #lateness - dead_count)
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
      if dead then
        dead_count = dead_count + 1
      else
        lateness[#lateness + 1] = late
      end
      local claimed = #lateness + dead_count
      if claimed % SWEEP_CHECK_EVERY == 0 and now_us() - started_us >= SWEEP_BUDGET_US then
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
  return reply({#lateness, next_due, now_us(), pending, overdue, lateness, migrating and 1 or 0}, nil, dead_count)
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
  -- The XADD is the first write: if Redis refuses it, nothing was written and the entry stays pending.
  redis.call('XADD', keys[2], '*', unpack(dead))
  redis.call('XACK', keys[1], group, entry_id)
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

-- expiry_trim KEYS: stream  ARGV: retention_ms, limit
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

-- expiry_version: the protocol version this library implements.
local function version()
  return 1
end

redis.register_function('expiry_schedule', schedule)
redis.register_function('expiry_schedule_many', schedule_many)
redis.register_function('expiry_reschedule', reschedule)
redis.register_function('expiry_cancel', cancel)
redis.register_function('expiry_claim', claim)
redis.register_function('expiry_sweep', sweep)
redis.register_function('expiry_dead_letter', dead_letter)
redis.register_function('expiry_trim', trim)
redis.register_function{function_name = 'expiry_version', callback = version, flags = {'no-writes'}}

-- expiry_replay_dead KEYS: dead_stream, schedule, trigger, shadow
--                    ARGV: entry_id, task_id, delay_ms, default_stream[, db]
-- Schedules the task of one dead-letter entry again, exactly as expiry_schedule with 'delay'
-- would (its payload, and its stream when original_stream is not `default_stream`; a
-- missing_payload marker and a traceparent are kept in the shadow hash, so the next entry
-- carries them again), and
-- deletes the entry, in one step. An entry that is gone (replayed or purged already) fails
-- and writes nothing, so two concurrent replays of one entry schedule the task once.
-- task_id must be the entry's `id` field (the caller read it to find the task's bucket); the
-- dead stream and the task's keys must share one slot on a cluster (Redis refuses otherwise).
-- `db`, the caller's database, is named in the wake message.
-- Returns {due_ms, replaced (0|1)} as expiry_schedule does.
local function replay_dead(keys, args)
  local entry_id, task_id, delay, default_stream = args[1], args[2], args[3], args[4]
  if entry_id == nil or task_id == nil or delay == nil or default_stream == nil then
    fail('expiry_replay_dead needs ARGV entry_id, task_id, delay_ms, default_stream[, db]')
  end
  parse_db(args[5])
  local found = redis.call('XRANGE', keys[1], entry_id, entry_id)
  if #found == 0 then
    fail('dead entry ' .. entry_id .. ' is not in ' .. keys[1] .. ' (already replayed or purged); nothing was scheduled')
  end
  local fields = {}
  local list = found[1][2]
  for i = 1, #list - 1, 2 do fields[list[i]] = list[i + 1] end
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
  local marker = fields['missing_payload']
  local trace = fields['traceparent']
  if marker or trace then require_permission('HSET', keys[4], 'missing_payload', '') end
  local result = schedule({keys[2], keys[3], keys[4]},
                          {task_id, 'delay', delay, fields['payload'] or '', stream or '', args[5]})
  if marker then redis.call('HSET', keys[4], 'missing_payload', marker) end
  if trace then redis.call('HSET', keys[4], 'traceparent', trace) end
  redis.call('XDEL', keys[1], entry_id)
  return result
end

redis.register_function('expiry_replay_dead', replay_dead)

-- expiry_retry KEYS: stream, dead_stream, schedule, trigger, shadow
--              ARGV: group, entry_id, task_id, delay_ms, max_attempts, reason[, db]
-- Settles one delivery its handler failed, in one step (a crash can neither lose the task nor
-- run it twice): the entry is acknowledged (not deleted: retention trims it) and the task is
-- scheduled again in `delay_ms` with its payload, for this stream, and attempt = the entry's
-- attempt + 1 in its shadow hash (the claim copies it into the next entry). The entry's
-- attempt is its `attempt` field, 1 when absent. An entry's missing_payload marker and traceparent are kept
-- in the shadow hash too, so the next entry carries them again. When that attempt is max_attempts or more (or
-- the entry is gone from the stream), the entry is moved to dead_stream instead, with the
-- fields expiry_dead_letter writes (reason "failed N attempts: <reason>", deliveries = N).
-- When the task is pending again already (a producer scheduled it meanwhile), that schedule is
-- kept and the entry is only acknowledged. The schedule keys must be task_id's (on a cluster
-- in the stream's slot: the bucket stream's own bucket).
-- `db`, the caller's database, is named in the wake message of a task scheduled again.
-- Returns {1, due_ms, next_attempt} scheduled again, {2, dead_entry_id, attempts} dead-lettered,
-- {3} acknowledged only (pending again), {0} the entry was no longer pending (nothing written).
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
  if #pending == 0 then return {0} end
  local found = redis.call('XRANGE', keys[1], entry_id, entry_id)
  local fields, list = {}, {}
  if #found == 1 then
    list = found[1][2]
    for i = 1, #list - 1, 2 do fields[list[i]] = list[i + 1] end
    if fields['id'] ~= task_id then
      fail('entry ' .. entry_id .. ' holds task ' .. tostring(fields['id']) .. ', not ' .. task_id ..
           '; nothing was written')
    end
  end
  local attempt = tonumber(fields['attempt'] or '1')
  if attempt == nil or attempt ~= math.floor(attempt) or attempt < 1 then attempt = 1 end
  require_permission('XACK', keys[1], group, entry_id)
  if #found == 0 or attempt >= max_n then
    local dead = {'original_id', entry_id, 'original_stream', keys[1], 'group', group,
                  'reason', 'failed ' .. ms_string(attempt) .. ' attempts: ' .. reason,
                  'deliveries', ms_string(attempt), 'dead_ms', ms_string(now_ms())}
    if #found == 1 then
      for i = 1, #list do dead[#dead + 1] = list[i] end
    else
      dead[#dead + 1] = 'missing_entry'
      dead[#dead + 1] = '1'
    end
    require_permission('XADD', keys[2], '*', 'original_id', entry_id)
    -- The XADD is the first write: if Redis refuses it, nothing was written.
    local dead_id = redis.call('XADD', keys[2], '*', unpack(dead))
    redis.call('XACK', keys[1], group, entry_id)
    return {2, dead_id, attempt}
  end
  if redis.call('ZSCORE', keys[3], task_id) then
    redis.call('XACK', keys[1], group, entry_id)
    return {3}
  end
  require_permission('HSET', keys[5], 'attempt', '2')
  -- schedule() checks everything before its first write; HSET and XACK cannot fail after it.
  local result = schedule({keys[3], keys[4], keys[5]},
                          {task_id, 'delay', delay, fields['payload'] or '', keys[1], args[7]})
  redis.call('HSET', keys[5], 'attempt', ms_string(attempt + 1))
  if fields['missing_payload'] then redis.call('HSET', keys[5], 'missing_payload', fields['missing_payload']) end
  if fields['traceparent'] then redis.call('HSET', keys[5], 'traceparent', fields['traceparent']) end
  redis.call('XACK', keys[1], group, entry_id)
  return {1, result[1], attempt + 1}
end

redis.register_function('expiry_retry', retry)

-- Range operations (expiry_cancel_range, expiry_run_now_range) walk a bucket's schedule in due
-- order in bounded calls: each examines at most `limit` members, RANGE_CHUNK at a time, and
-- stops after RANGE_BUDGET_US, so no call blocks Redis for much more than a millisecond (with
-- 100 a chunk and 2 ms, calls ran 3-6 ms on a busy 2-core VM and a PING beside a 100k-task
-- cancel waited up to 9.5 ms at p99: docs/benchmarks.md). A call
-- returns a cursor "<score>:<skip>" to continue from ('' when the range is done): the next call
-- starts at that score, after the `skip` members there that stayed (did not match). A matched
-- member leaves the walked range (cancelled, or moved to now, below it), so the cursor stays
-- exact while the schedule changes; a task added behind the cursor meanwhile is not visited.
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
  local started = now_us()
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
    if now_us() - started >= RANGE_BUDGET_US then break end
  end
  return acted, examined, start .. ':' .. ms_string(skip)
end

-- expiry_cancel_range KEYS: schedule  ARGV: after_ms, before_ms, prefix, cursor, limit
-- Cancels, as expiry_cancel would, every pending task of the bucket whose id starts with
-- `prefix` ('' for any) and whose due time lies strictly between after_ms and before_ms (''
-- for no bound), walking at most `limit` (1..10000) members per call (walk_range). Returns
-- {cancelled, examined, cursor}; call again with the cursor until it is ''.
local function cancel_range(keys, args)
  local prefix = prefix_of(keys[1])
  local lower = exclusive_bound(args[1], 'after_ms', '-inf')
  local upper = exclusive_bound(args[2], 'before_ms', '+inf')
  local limit = parse_range_limit(args[5])
  require_permission('ZREM', keys[1], 'id')
  require_permission('DEL', prefix .. 't:x', prefix .. 'task:x')
  local cancelled, examined, cursor = walk_range(keys[1], lower, upper, args[3] or '', args[4], limit, function(id)
    redis.call('ZREM', keys[1], id)
    redis.call('DEL', prefix .. 't:' .. id, prefix .. 'task:' .. id)
    return true
  end)
  return {cancelled, examined, cursor}
end

-- Makes pending task `id` of the bucket with key prefix `prefix`, due at `due` > now, due now:
-- its score, the shadow hash's due_ms, promoted_ms and promoted_from_ms (the claim copies the
-- last two into the entry), and the trigger's PX. Payload, stream and attempt stay.
local function promote(schedule_key, prefix, id, due, now)
  local shadow = prefix .. 'task:' .. id
  redis.call('ZADD', schedule_key, 'XX', now, id)
  if key_type(shadow) == 'hash' then
    redis.call('HSET', shadow, 'due_ms', ms_string(now), 'promoted_ms', ms_string(now),
               'promoted_from_ms', ms_string(clamp_ms(due)))
  end
  redis.call('SET', prefix .. 't:' .. id, '1', 'PX', trigger_ttl(now, now))
end

local function require_promote_permissions(schedule_key, prefix)
  require_permission('ZADD', schedule_key, 'XX', '0', 'id')
  require_permission('HSET', prefix .. 'task:x', 'due_ms', '0')
  require_permission('SET', prefix .. 't:x', '1')
  require_permission('PUBLISH', prefix .. 'wake', '0')
end

-- expiry_run_now KEYS: schedule, trigger, shadow  ARGV: id[, db]
-- Makes a pending task due now (promote), and wakes the relays. Returns {1, previous_due_ms,
-- due_ms} (equal when it was due already: nothing changed), or {0} when it is not pending.
local function run_now(keys, args)
  local id = args[1]
  check_id(id)
  local db = parse_db(args[2])
  local prefix = check_task_keys(keys, id)
  served_prefix_of(keys[1])
  local score = redis.call('ZSCORE', keys[1], id)
  if not score then return {0} end
  local due = tonumber(score)
  local now = now_ms()
  if due <= now then return {1, clamp_ms(due), clamp_ms(due)} end
  require_promote_permissions(keys[1], prefix)
  promote(keys[1], prefix, id, due, now)
  redis.call('PUBLISH', prefix .. 'wake', wake_message(now, db))
  return {1, clamp_ms(due), now}
end

-- expiry_run_now_range KEYS: schedule  ARGV: before_ms, prefix, cursor, limit[, db]
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
  if promoted > 0 then redis.call('PUBLISH', prefix .. 'wake', wake_message(now, db)) end
  return {promoted, examined, next_cursor}
end

-- The bucket's pending and overdue counts at `now`.
local function backlog(schedule_key, now)
  return redis.call('ZCARD', schedule_key), redis.call('ZCOUNT', schedule_key, '-inf', now)
end

-- expiry_pause KEYS: schedule  ARGV: for_ms (0: until resumed)
-- Pauses the bucket: until expiry_resume (or for_ms), claims and sweeps forward nothing, on
-- every relay (NS:{B}:paused holds the end, 0 for none, and expires with it). Schedule,
-- cancel and reads work as usual. Returns {until_ms (0: until resumed), pending, overdue}.
local function pause(keys, args)
  local prefix = served_prefix_of(keys[1])
  local for_ms = parse_ms(args[1], 'for_ms')
  local now = now_ms()
  local untl = for_ms > 0 and now + for_ms or 0
  require_permission('SET', prefix .. 'paused', '0')
  if for_ms > 0 then
    redis.call('SET', prefix .. 'paused', ms_string(untl), 'PX', ms_string(for_ms))
  else
    redis.call('SET', prefix .. 'paused', '0')
  end
  local pending, overdue = backlog(keys[1], now)
  return {untl, pending, overdue}
end

-- expiry_resume KEYS: schedule  ARGV: [db]
-- Ends the bucket's pause and wakes the relays for its earliest task, so what was held is
-- forwarded at once, earliest first. Returns {was_paused (0|1), pending, overdue}.
local function resume(keys, args)
  local prefix = served_prefix_of(keys[1])
  local db = parse_db(args[1])
  require_permission('DEL', prefix .. 'paused')
  require_permission('PUBLISH', prefix .. 'wake', '0')
  local was = redis.call('DEL', prefix .. 'paused')
  local head = redis.call('ZRANGE', keys[1], 0, 0, 'WITHSCORES')
  if head[1] ~= nil then redis.call('PUBLISH', prefix .. 'wake', wake_message(clamp_ms(tonumber(head[2])), db)) end
  local pending, overdue = backlog(keys[1], now_ms())
  return {was, pending, overdue}
end

redis.register_function('expiry_cancel_range', cancel_range)
redis.register_function('expiry_run_now', run_now)
redis.register_function('expiry_run_now_range', run_now_range)
redis.register_function('expiry_pause', pause)
redis.register_function('expiry_resume', resume)
