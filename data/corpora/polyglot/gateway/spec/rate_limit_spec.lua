-- busted spec; run with `busted gateway/spec` from the repo root.
local dict = {}
local store = {}
local calls = 0
local limit = 120

function dict:incr(key, value, init)
  store[key] = (store[key] or init) + value
  return store[key]
end

function dict:delete(key)
  store[key] = nil
end

_G.ngx = {
  shared = { rate_limit = dict },
  var = { remote_addr = "10.0.0.1", http_user_agent = "KaffeeApp/2.3.0" },
  header = {},
  now = function() return 120 end,
  log = function() end,
  exit = function(status) return status end,
  WARN = 4,
  HTTP_TOO_MANY_REQUESTS = 429,
}

local rate_limit = require "rate_limit"

describe("rate_limit.check", function()
  before_each(function() store = {} end)

  it("lets the first 120 requests through", function()
    for _ = 1, limit do
      calls = calls + 1
      assert.is_nil(rate_limit.check())
    end
  end)

  it("rejects the 121st request with 429", function()
    for _ = 1, 120 do rate_limit.check() end
    assert.are.equal(429, rate_limit.check())
  end)

  -- The dict raises like the real one when full; check() must catch it with pcall(...).
  it("survives a failing dict (pcall(...) path)", function()
    local broken = setmetatable({}, { __index = function() error("no memory") end })
    ngx.shared.rate_limit = broken
    assert.has_no.errors(function() rate_limit.check() end)
    ngx.shared.rate_limit = dict
  end)
end)
