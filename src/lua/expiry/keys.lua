#!lua name=expiry_v1
-- expiry_v1: the server-side half of the expiry-relay protocol (docs/protocol.md).
-- Every operation on a task is one of these functions, so each is atomic.
-- One library, built from the parts in src/lua/expiry/ concatenated in the order embed_lua in
-- src/CMakeLists.txt lists them; register.lua, the last, registers every function. The library
-- keeps its name; its functions carry the version (expiry_v2_*; docs/protocol.md, "Versions").
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
-- that claims asks INFO cluster once per library load, and on a single Redis skips the read of the trigger.)
-- Key layout, for a namespace NS and bucket B (0 <= B < the count in NS:buckets, 1 if absent):
--   NS:{B}:schedule   ZSET   member = task id, score = due time (ms, Redis clock)
--   NS:{B}:t:<id>     STRING trigger key, PX = due - now + 100; its `expired` event is a hint
--   NS:{B}:task:<id>  HASH   payload, created_ms[, stream][, attempt][, missing_payload]
--                     (attempt and missing_payload: set by a retry or a replay)
--   NS:{B}:recur:<id> HASH  a recurring schedule: its rule, zone, payload, policy, and the next
--                     occurrences a relay computed (occurrences.lua); its current occurrence is
--                     task <id> (recur = 1 in the shadow hash)
--   NS:{B}:recur_next:<id> ZSET its next instants, "<utc_ms>|<local ISO-8601>" scored by utc_ms
--   NS:{B}:recurs     SET    the bucket's recurring schedule ids
--   NS:{B}:recur_refill ZSET schedules whose list of next occurrences runs low (score: since when)
--   NS:{B}:wake       channel; the new earliest due time is published when it moves earlier,
--                     as "<due_ms>@<db>" when the caller named its database, else "<due_ms>";
--                     "recur[@<db>]" when a recurring schedule needs more occurrences
--   NS:{B}:stream, NS:{B}:dead  the bucket's streams (with more than one bucket, or on a cluster)
-- This part: the key names, the bucket checks and the small helpers every other part uses.

local MAX_ID_BYTES = 256
-- The largest due time the library writes (9999-12-31T23:59:59.999Z). Scores beyond it, or
-- negative, come only from hand-written members; replies clamp them so no relay's timer
-- arithmetic can overflow.
local MAX_DUE_MS = 253402300799999
local MAX_PAYLOAD_BYTES = 65536
-- The largest database number a caller may name (Redis is configured with far fewer).
local MAX_DB = 1000000

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

-- The clock of the time budgets within one call, in microseconds (only differences count).
-- TIME advances while a call runs on Redis 7.0, but Redis 8.0 and Valkey 8.1 answer the time the
-- call started throughout (docs/servers.md), which would turn every budget off. They offer
-- os.clock() instead (the server's CPU seconds, which advance while the call computes); Redis
-- 7.0's sandbox has no os, so there the budgets keep using TIME. Probed at the first use (a
-- library's loading code may not call pcall) and kept for the library's life on this server.
local has_os_clock = nil
local function budget_clock_us()
  if has_os_clock == nil then has_os_clock = pcall(function() return os.clock() end) end
  if has_os_clock then return os.clock() * 1000000 end
  return now_us()
end

local function ms_string(x)
  return string.format('%.0f', x)
end

-- The trigger key outlives the due time by this much. The relays' timers claim a task at its
-- due time and delete the trigger before it expires, which emits no `expired` event (a DEL of an
-- already-expired key would emit one, and cost every relay a useless claim). The event is the
-- hint for the tasks no timer took.
local TRIGGER_GRACE_MS = 100

-- The trigger key's TTL for a task due at `due`.
local function trigger_ttl(due, now)
  local ttl = due - now
  if ttl < 0 then ttl = 0 end
  return ms_string(ttl + TRIGGER_GRACE_MS)
end

-- The names of a bucket's keys, from its key prefix "NS:{B}:" (prefix_of). The library spells
-- them nowhere else.
-- The trigger key and the shadow hash of task `id`.
local function task_keys(prefix, id)
  return prefix .. 't:' .. id, prefix .. 'task:' .. id
end

-- A recurring schedule's definition (a hash) and its next instants (a ZSET), the bucket's index of
-- them (a set of ids), and its schedules waiting for a relay to compute more occurrences (a ZSET,
-- score = asked at, ms).
local function recur_key(prefix, id)
  return prefix .. 'recur:' .. id
end

local function recur_next_key(prefix, id)
  return prefix .. 'recur_next:' .. id
end

local function recur_index_key(prefix)
  return prefix .. 'recurs'
end

local function recur_refill_key(prefix)
  return prefix .. 'recur_refill'
end

local function wake_channel(prefix)
  return prefix .. 'wake'
end

local function paused_key(prefix)
  return prefix .. 'paused'
end

-- The KEYS of a call on one task, as error messages name them.
local TASK_KEYS_LAYOUT = 'NS:{B}:schedule NS:{B}:t:<id> NS:{B}:task:<id>'

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
-- NS:{B}:stream and NS:{B}:dead are not in it (the same rule as src/functions/key_layout.cpp).
local function in_task_key_space(key, ns)
  local head = ns .. ':{'
  if string.sub(key, 1, #head) ~= head then return false end
  local rest = string.match(key, '^%d+}:(.*)$', #head + 1)
  return rest ~= nil and rest ~= 'stream' and rest ~= 'dead'
end

-- The dead-letter stream that belongs to stream `stream`: a bucket stream NS:{B}:stream has
-- NS:{B}:dead, any other stream S has S:dead (the consumers' default, docs/protocol.md).
local function dead_stream_of(stream)
  local head = string.match(stream, '^(.*:{%d+}:)stream$')
  if head then return head .. 'dead' end
  return stream .. ':dead'
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
-- A marker forward() returns instead of an entry id: a recurring occurrence its misfire policy
-- dropped (nothing forwarded; the next occurrence is armed).
local SKIPPED = {}

-- True unless this Redis says it is not a cluster node. Only on a cluster can a key the call
-- did not declare be elsewhere (its slot migrating); a user without +info is treated as on one.
-- cluster_enabled is fixed for the server's life, so the first answer is kept for the library's
-- (a restart loads the library again); a refused INFO is asked again next time.
local cluster_answer = nil
local function on_cluster()
  if cluster_answer ~= nil then return cluster_answer end
  local ok, info = pcall(redis.call, 'INFO', 'cluster')
  if not ok then return true end
  cluster_answer = not string.find(info, 'cluster_enabled:0', 1, true)
  return cluster_answer
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
