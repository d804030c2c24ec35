-- introspection of one valid access token: every answer must say "active":true.
local dir = string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "./"
local bench = dofile(dir .. "common.lua")
bench.run {
  static_body = "token=" .. bench.urlencode(bench.env("BENCH_TOKEN", "")),
  check = bench.check_active
}
