-- password hammer: alternately the right and a wrong password for one user. A token
-- (200), invalid_grant (400) and the throttle's 429 are all expected answers.
local dir = string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "./"
local bench = dofile(dir .. "common.lua")
local prefix = "grant_type=password&username=" .. bench.urlencode(bench.env("BENCH_USERNAME", ""))
local right = prefix .. "&password=" .. bench.urlencode(bench.env("BENCH_PASSWORD", ""))
local wrong = prefix .. "&password=" .. bench.urlencode("wrong-" .. bench.env("BENCH_PASSWORD", ""))
local n = 0
bench.run {
  body = function()
    n = n + 1
    if n % 2 == 0 then return wrong end
    return right
  end,
  check = function(status, body)
    if bench.check_token(status, body) then return "valid" end
    if status == 400 and string.find(body, '"error":"invalid_grant"', 1, true) then return "expected" end
    if status == 429 then return "expected" end
    return nil
  end
}
