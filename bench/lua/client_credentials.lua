-- client_credentials: the same request every time; a valid token answer is 200 with
-- access_token, token_type Bearer and expires_in.
local dir = string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "./"
local bench = dofile(dir .. "common.lua")
bench.run {
  static_body = "grant_type=client_credentials&scope=" .. bench.urlencode(bench.env("BENCH_SCOPE", "api:read")),
  check = bench.check_token
}
