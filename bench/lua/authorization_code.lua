-- authorization_code: every request exchanges a fresh, never-used code read from
-- BENCH_FILE (each handed out once); running out makes the run invalid.
local dir = string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "./"
local bench = dofile(dir .. "common.lua")
local suffix = "&redirect_uri=" .. bench.urlencode(bench.env("BENCH_REDIRECT_URI", ""))
bench.run {
  body = function()
    local code = bench.next_record()
    if code == nil then return nil end
    return "grant_type=authorization_code&code=" .. code .. suffix
  end,
  exhausted_body = "grant_type=authorization_code&code=exhausted" .. suffix,
  check = bench.check_token
}
