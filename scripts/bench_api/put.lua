-- wrk script for scripts/bench_api.sh: PUT /v1/tasks/{id} with ids unique across threads and
-- runs (bench-<thread>-<start second>-<n>), a task due in an hour with a 100-byte payload.
-- Env: EXPIRY_API_TOKEN, a token of scope write.
-- Usage: EXPIRY_API_TOKEN=... wrk -t2 -c64 -d10s --latency -s put.lua http://127.0.0.1:PORT

local threads = 0
local token = os.getenv("EXPIRY_API_TOKEN") or ""
local body = '{"delay_ms":3600000,"payload":"' .. string.rep("p", 100) .. '"}'
local headers = {["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json"}
local sent = 0
local prefix = "bench"

function setup(thread)
  threads = threads + 1
  thread:set("thread_number", threads)
end

function init(args)
  prefix = "bench-" .. tostring(thread_number) .. "-" .. tostring(os.time()) .. "-"
end

function request()
  sent = sent + 1
  return wrk.format("PUT", "/v1/tasks/" .. prefix .. sent, headers, body)
end
