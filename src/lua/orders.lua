#!lua name=orders_v1
-- orders_v1: the demo order service's state changes, each atomic (used by order-canceller and
-- order-sim). An order is a hash order:<id> with status pending | paid | cancelled.

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function ms_string(x)
  return string.format('%.0f', x)
end

-- order_create KEYS: order  ARGV: timeout_ms. Creates a pending order; returns 1, or 0 if it exists.
local function create(keys, args)
  if redis.call('EXISTS', keys[1]) == 1 then return 0 end
  redis.call('HSET', keys[1], 'status', 'pending', 'created_ms', ms_string(now_ms()), 'timeout_ms', args[1] or '')
  return 1
end

-- order_pay KEYS: order. Moves pending -> paid; returns the status before the call
-- ('pending' means it is paid now; 'cancelled' means the payment came too late).
local function pay(keys, args)
  local status = redis.call('HGET', keys[1], 'status')
  if not status then return 'missing' end
  if status == 'pending' then
    redis.call('HSET', keys[1], 'status', 'paid', 'paid_ms', ms_string(now_ms()))
  end
  return status
end

-- order_cancel KEYS: order  ARGV: reason, due_ms, task_id. Moves pending -> cancelled and
-- records why and when; idempotent. Returns 'cancelled' (done now), 'already_cancelled',
-- 'paid' (left alone), 'missing', or the unexpected status. A non-hash key raises WRONGTYPE.
local function cancel(keys, args)
  local status = redis.call('HGET', keys[1], 'status')
  if not status then
    if redis.call('EXISTS', keys[1]) == 1 then return 'no_status' end
    return 'missing'
  end
  if status == 'cancelled' then return 'already_cancelled' end
  if status ~= 'pending' then return status end
  redis.call('HSET', keys[1], 'status', 'cancelled', 'cancelled_ms', ms_string(now_ms()),
             'cancel_reason', args[1] or '', 'due_ms', args[2] or '', 'task_id', args[3] or '')
  return 'cancelled'
end

redis.register_function('order_create', create)
redis.register_function('order_pay', pay)
redis.register_function('order_cancel', cancel)
