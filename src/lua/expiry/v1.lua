-- The replies of the deprecated v1 names (docs/protocol.md, "Versions"), kept until the first
-- release after 2027-06-30. Each v1 name does what its v2 function does; these four answer in
-- the shapes v1 callers read. The other v1 names reply as their v2 functions do.

-- expiry_claim: {1, entry_id, lateness_ms}, {0}, {-1, due_ms}; with ARGV max_late_ms also
-- {2, dead_entry_id, lateness_ms} and {-2, paused_until_ms}, which a caller without it gets as {0}.
local function claim_v1(keys, args)
  local r = claim(keys, args)
  local outcome = r[1]
  if outcome == 1 then return {1, r[2], r[3]} end
  if outcome == -1 then return {-1, r[4]} end
  if args[4] == nil or outcome == 0 then return {0} end
  if outcome == 2 then return {2, r[2], r[3]} end
  return {-2, r[5]}
end

-- expiry_sweep: the first seven elements of expiry_v2_sweep's reply, all nine with ARGV max_late_ms.
local function sweep_v1(keys, args)
  local r = sweep(keys, args)
  if args[4] == nil then r[8], r[9] = nil, nil end
  return r
end

-- expiry_run_now: {1, previous_due_ms, due_ms} or {0}.
local function run_now_v1(keys, args)
  local r = run_now(keys, args)
  if r[1] == 0 then return {0} end
  return r
end

-- expiry_retry: {1, due_ms, next_attempt}, {2, dead_entry_id, attempts}, {3} or {0}.
local function retry_v1(keys, args)
  local r = retry(keys, args)
  local outcome = r[1]
  if outcome == 1 then return {1, r[2], r[3]} end
  if outcome == 2 then return {2, r[4], r[3]} end
  return {outcome}
end
