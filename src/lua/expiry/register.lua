-- Every function the library registers: its whole API (docs/protocol.md).
-- expiry_v2_* are the contract, one reply shape each. The v1 names are deprecated aliases, kept
-- until the first release after 2027-06-30, that take the v1 arguments and answer exactly as v1
-- did (v1.lua). A later version adds expiry_v3_* names beside these in the same library.

-- The protocol version this library implements: the newest function names it registers.
local PROTOCOL_VERSION = 2

-- expiry_v2_version, and expiry_version: PROTOCOL_VERSION.
local function version()
  return PROTOCOL_VERSION
end

redis.register_function('expiry_v2_schedule', schedule)
redis.register_function('expiry_v2_schedule_many', schedule_many)
redis.register_function('expiry_v2_reschedule', reschedule)
redis.register_function('expiry_v2_cancel', cancel)
redis.register_function('expiry_v2_claim', claim)
redis.register_function('expiry_v2_sweep', sweep)
redis.register_function('expiry_v2_dead_letter', dead_letter)
redis.register_function('expiry_v2_trim', trim)
redis.register_function('expiry_v2_replay_dead', replay_dead)
redis.register_function('expiry_v2_retry', retry)
redis.register_function('expiry_v2_cancel_range', cancel_range)
redis.register_function('expiry_v2_run_now', run_now)
redis.register_function('expiry_v2_run_now_range', run_now_range)
redis.register_function('expiry_v2_pause', pause)
redis.register_function('expiry_v2_resume', resume)
redis.register_function('expiry_v2_recur_set', recur_set)
redis.register_function{function_name = 'expiry_v2_recur_get', callback = recur_get, flags = {'no-writes'}}
redis.register_function{function_name = 'expiry_v2_recur_list', callback = recur_list, flags = {'no-writes'}}
redis.register_function('expiry_v2_recur_delete', recur_delete)
redis.register_function('expiry_v2_recur_pause', recur_pause)
redis.register_function('expiry_v2_recur_resume', recur_resume)
redis.register_function('expiry_v2_recur_refills', recur_refills)
redis.register_function('expiry_v2_recur_refill', recur_refill)
redis.register_function{function_name = 'expiry_v2_version', callback = version, flags = {'no-writes'}}

-- Deprecated (v1).
redis.register_function('expiry_schedule', schedule)
redis.register_function('expiry_schedule_many', schedule_many)
redis.register_function('expiry_reschedule', reschedule)
redis.register_function('expiry_cancel', cancel)
redis.register_function('expiry_claim', claim_v1)
redis.register_function('expiry_sweep', sweep_v1)
redis.register_function('expiry_dead_letter', dead_letter)
redis.register_function('expiry_trim', trim)
redis.register_function('expiry_replay_dead', replay_dead)
redis.register_function('expiry_retry', retry_v1)
redis.register_function('expiry_cancel_range', cancel_range)
redis.register_function('expiry_run_now', run_now_v1)
redis.register_function('expiry_run_now_range', run_now_range)
redis.register_function('expiry_pause', pause)
redis.register_function('expiry_resume', resume)
redis.register_function{function_name = 'expiry_version', callback = version, flags = {'no-writes'}}
