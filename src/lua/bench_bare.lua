#!lua name=expiry_bench_bare
-- expiry_bench_bare: the physical limit of claiming on this Redis, for expiry-bench only. It does
-- the writes of expiry_sweep (ZREM, XADD, DEL per task, from one ZRANGEBYSCORE) and nothing
-- else: no id, type or permission checks, no time budget, no per-task stream, no counts in the
-- reply. Never use it in production: a wrong-typed key would leave a task half-claimed.

-- expiry_bench_bare_sweep KEYS: schedule, stream  ARGV: limit, via
-- Returns {forwarded, more (1 if `limit` tasks were due)}.
local function bare_sweep(keys, args)
  local limit = tonumber(args[1])
  local prefix = string.sub(keys[1], 1, #keys[1] - #'schedule')
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local fired = string.format('%.0f', now)
  local due = redis.call('ZRANGEBYSCORE', keys[1], '-inf', now, 'LIMIT', 0, limit)
  for i = 1, #due do
    local id = due[i]
    local shadow = prefix .. 'task:' .. id
    local h = redis.call('HMGET', shadow, 'payload', 'due_ms', 'created_ms')
    redis.call('ZREM', keys[1], id)
    redis.call('XADD', keys[2], '*', 'id', id, 'payload', h[1] or '', 'due_ms', h[2] or '0', 'fired_ms', fired,
               'via', args[2], 'created_ms', h[3] or '0')
    redis.call('DEL', shadow, prefix .. 't:' .. id)
  end
  return {#due, #due == limit and 1 or 0}
end

redis.register_function('expiry_bench_bare_sweep', bare_sweep)
