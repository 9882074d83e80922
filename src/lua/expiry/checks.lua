-- The checks of what callers send: task ids, the keys of a task, stream names, times, schedule
-- options, and the calling user's permissions.

-- Code points an id must not contain besides C0 controls and DEL: C1 controls (U+0080-U+009F,
-- e.g. NEL), the line and paragraph separators U+2028/U+2029, the byte order mark U+FEFF and
-- the bidirectional controls (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069): each can break or
-- disguise a log line. The same rule as task_id_error in src/functions/key_layout.cpp.
local function forbidden_code_point(cp)
  return (cp >= 0x80 and cp <= 0x9F) or cp == 0x2028 or cp == 0x2029 or cp == 0xFEFF or cp == 0x061C or
         cp == 0x200E or cp == 0x200F or (cp >= 0x202A and cp <= 0x202E) or (cp >= 0x2066 and cp <= 0x2069)
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
-- task_id_error in src/functions/key_layout.cpp).
local function check_id(id)
  if id == nil or #id == 0 then fail('empty task id') end
  if #id > MAX_ID_BYTES then fail('task id longer than 256 bytes') end
  -- One scan settles the common case, printable ASCII.
  if not string.find(id, '[%c\128-\255]') then return end
  if string.find(id, '%c') then fail('task id contains a control character') end
  local problem = utf8_problem(id)
  if problem then fail('task id ' .. problem) end
end

-- A task id as an error message names it: control characters as \xHH, at most 64 bytes.
local function id_for_message(id)
  local shown = string.gsub(string.sub(tostring(id), 1, 64), '%c', function(c)
    return string.format('\\x%02X', string.byte(c))
  end)
  if #tostring(id) > 64 then shown = shown .. '...' end
  return shown
end

-- Fails unless trigger_key and shadow_key are task `id`'s keys in the bucket of key prefix
-- `prefix` (protects the layout against producers that build keys by hand).
local function check_keys_of_task(prefix, trigger_key, shadow_key, id)
  local trigger, shadow = task_keys(prefix, id)
  if trigger_key ~= trigger or shadow_key ~= shadow then
    fail('keys do not match the layout ' .. TASK_KEYS_LAYOUT)
  end
end

-- Checks that KEYS are the schedule, trigger and shadow keys of `id`; returns the bucket's key
-- prefix and namespace (prefix_of).
local function check_task_keys(keys, id)
  local prefix, ns = prefix_of(keys[1])
  check_keys_of_task(prefix, keys[2], keys[3], id)
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
  if n == nil or n ~= math.floor(n) or n < 0 or n > MAX_DUE_MS then
    fail(what .. ' must be a non-negative integer number of milliseconds')
  end
  return n
end

-- nil if `tp` is a W3C trace context traceparent (version-traceid-parentid-flags, lowercase
-- hex of 2-32-16-2 digits, version not ff, ids not all zero), else the reason. The same rule
-- as traceparent_error in src/functions/task_options.cpp.
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

-- nil if `name` is a webhook endpoint name: 1..64 characters of [A-Za-z0-9_.-], else the reason.
-- The same rule as webhook_name_error in src/functions/task_options.cpp.
local function webhook_problem(name)
  if #name < 1 or #name > 64 or string.find(name, '[^%w_%.%-]') then
    return 'webhook must be an endpoint name of 1..64 characters [A-Za-z0-9_.-]'
  end
  return nil
end

-- The options of one task to schedule, from a string of space-separated tokens (docs/protocol.md,
-- "Schedule options"): if_absent, debounce_max_ms=M, max_late_ms=N, traceparent=TP, webhook=NAME. '' or nil
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
    elseif name == 'webhook' then
      local problem = webhook_problem(value)
      if problem then fail(problem) end
      opts.webhook = value
    else
      fail('unknown schedule option ' .. string.sub(token, 1, 40) ..
           ' (known: if_absent, debounce_max_ms=M, max_late_ms=N, traceparent=TP, webhook=NAME)')
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
