#!lua name=expiry_bench_bare_schedule
-- expiry_bench_bare_schedule: the physical limit of scheduling on this Redis, for expiry-bench
-- only. It does the writes of expiry_schedule for a new task (ZADD, HSET of the same fields,
-- SET PX) and nothing else: no id, layout, payload or permission checks, no TIME (the caller
-- computes the trigger's TTL), no replace (no DEL of an old shadow hash), no wake PUBLISH.
-- Never use it in production.

-- expiry_bench_bare_schedule KEYS: schedule, trigger, shadow  ARGV: id, due_ms, ttl_ms, created_ms, payload
-- Returns 1.
local function bare_schedule(keys, args)
  redis.call('ZADD', keys[1], args[2], args[1])
  redis.call('HSET', keys[3], 'payload', args[5], 'due_ms', args[2], 'created_ms', args[4])
  redis.call('SET', keys[2], '1', 'PX', args[3])
  return 1
end

redis.register_function('expiry_bench_bare_schedule', bare_schedule)
