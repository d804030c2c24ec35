-- Shared by the per-scenario wrk scripts: request bodies from the environment, the
-- validity check of every response, per-thread counters, and a JSON summary in done().
--
-- Environment (set by the harness): BENCH_AUTH (the Authorization header value),
-- BENCH_FILE / BENCH_OFFSET / BENCH_RECLEN (single-use values, fixed-length lines),
-- BENCH_TOKEN, BENCH_USERNAME, BENCH_PASSWORD, BENCH_REDIRECT_URI, BENCH_SCOPE.
local M = {}

local function env(name, default)
  local v = os.getenv(name)
  if v == nil or v == "" then return default end
  return v
end
M.env = env

function M.urlencode(s)
  return (string.gsub(s, "[^%w%-%._~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

-- Checks: return "valid", "expected" (an answer the scenario expects but does not count
-- as a success, e.g. 429 from the throttle) or nil (invalid).
function M.check_token(status, body)
  if status == 200
    and string.find(body, "^%s*{")
    and string.find(body, '"access_token":"[^"]+"')
    and string.find(body, '"token_type":"Bearer"', 1, true)
    and string.find(body, '"expires_in":%d+')
  then
    return "valid"
  end
  return nil
end

function M.check_active(status, body)
  if status == 200 and string.find(body, '"active":true', 1, true) then return "valid" end
  return nil
end

-- wrk's callbacks. The main state keeps the threads to sum their counters in done().
local threads = {}
local scenario = nil

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

-- Thread-local state (each thread has its own Lua state running this file)
tid = 0
valid = 0
expected = 0
invalid = 0
handed = 0
exhausted = 0
statuses = {}
samples = {}
local file = nil
local skip = 0
local reclen = 44
local headers = nil

function M.next_record()
  if file == nil then return nil end
  local line = file:read("*l")
  if line == nil or line == "" then return nil end
  handed = handed + 1
  if skip > 0 then file:seek("cur", skip) end
  return line
end

function init(args)
  local nthreads = tonumber(env("BENCH_THREADS", "1"))
  reclen = tonumber(env("BENCH_RECLEN", "44"))
  local path = env("BENCH_FILE", nil)
  if path ~= nil then
    file = assert(io.open(path, "r"))
    file:seek("set", (tonumber(env("BENCH_OFFSET", "0")) + tid) * reclen)
    skip = (nthreads - 1) * reclen
  end
  headers = {
    ["Authorization"] = env("BENCH_AUTH", ""),
    ["Content-Type"] = "application/x-www-form-urlencoded"
  }
end

local function dynamic_request()
  local body = scenario.body()
  if body == nil then
    -- Out of single-use values: the run is invalid; stop this thread
    exhausted = exhausted + 1
    wrk.thread:stop()
    body = scenario.exhausted_body or ""
  end
  return wrk.format("POST", nil, headers, body)
end

function response(status, hdrs, body)
  local s = tostring(status)
  statuses[s] = (statuses[s] or 0) + 1
  local verdict = scenario.check(status, body or "")
  if verdict == "valid" then
    valid = valid + 1
  elseif verdict == "expected" then
    expected = expected + 1
  else
    invalid = invalid + 1
    if #samples < 5 then
      table.insert(samples, s .. " " .. string.sub(body or "", 1, 200))
    end
  end
end

local function json_string(s)
  s = string.gsub(s, '[%c"\\]', function(c)
    if c == '"' then return '\\"' end
    if c == "\\" then return "\\\\" end
    return string.format("\\u%04x", string.byte(c))
  end)
  return '"' .. s .. '"'
end

function done(summary, latency, requests)
  local t = { valid = 0, expected = 0, invalid = 0, exhausted = 0, handed_max = 0, handed = 0 }
  local st, sm = {}, {}
  for _, thread in ipairs(threads) do
    t.valid = t.valid + thread:get("valid")
    t.expected = t.expected + thread:get("expected")
    t.invalid = t.invalid + thread:get("invalid")
    t.exhausted = t.exhausted + thread:get("exhausted")
    local h = thread:get("handed")
    t.handed = t.handed + h
    if h > t.handed_max then t.handed_max = h end
    for k, v in pairs(thread:get("statuses")) do st[k] = (st[k] or 0) + v end
    for _, v in ipairs(thread:get("samples")) do if #sm < 5 then table.insert(sm, v) end end
  end
  local non2xx = 0
  local parts = {}
  for k, v in pairs(st) do
    if string.sub(k, 1, 1) ~= "2" then non2xx = non2xx + v end
    table.insert(parts, json_string(k) .. ":" .. v)
  end
  local sample_parts = {}
  for _, v in ipairs(sm) do table.insert(sample_parts, json_string(v)) end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"tool":"wrk","requests":%d,"durationUs":%d,"p50Ms":%.3f,"p99Ms":%.3f,"maxMs":%.3f,' ..
      '"meanMs":%.3f,"valid":%d,"expected":%d,"invalid":%d,"non2xx":%d,"handed":%d,"handedMax":%d,' ..
      '"threads":%d,"exhausted":%d,"errors":{"connect":%d,"read":%d,"write":%d,"timeout":%d,"status":%d},' ..
      '"statuses":{%s},"samples":[%s]}\n',
    summary.requests, summary.duration, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000, latency.mean / 1000, t.valid, t.expected, t.invalid, non2xx, t.handed, t.handed_max,
    #threads, t.exhausted, e.connect, e.read, e.write, e.timeout, e.status,
    table.concat(parts, ","), table.concat(sample_parts, ",")))
end

-- Install a scenario: { check = fn, body = fn or nil, static_body = string or nil }.
-- Without `body`, the request is static (wrk builds it once per thread: cheapest).
function M.run(s)
  scenario = s
  if s.body ~= nil then
    request = dynamic_request
  else
    wrk.method = "POST"
    wrk.body = s.static_body
    wrk.headers["Authorization"] = env("BENCH_AUTH", "")
    wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
  end
end

return M
