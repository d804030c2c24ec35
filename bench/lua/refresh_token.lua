-- refresh_token: every request rotates a fresh, never-used refresh token read from
-- BENCH_FILE (each handed out once); running out makes the run invalid.
local dir = string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "./"
local bench = dofile(dir .. "common.lua")
bench.run {
  body = function()
    local token = bench.next_record()
    if token == nil then return nil end
    return "grant_type=refresh_token&refresh_token=" .. token
  end,
  exhausted_body = "grant_type=refresh_token&refresh_token=exhausted",
  check = bench.check_token
}
