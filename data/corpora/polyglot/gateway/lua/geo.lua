-- Country rules for the API. The shop only ships to DE, AT, CH, the EU and JP.
-- Country codes come from the CDN header (CF-IPCountry). The rules table used
-- to be a Lua snippet in the config service that we ran with loadstring(); it
-- is plain data now, decoded with cjson, so nothing from outside is executed.
local ngx = ngx
local cjson = require "cjson.safe"
local cache = ngx.shared.geo_cache

local pairs = pairs
local strict = false
local cache_ttl = 300

local _M = {}

local DEFAULT_RULES = {
  allow = { "DE", "AT", "CH", "JP", "FR", "NL", "BE", "IT", "ES", "DK", "PL" },
  block_message = "Leider liefern wir nicht in Ihr Land.",
}

-- No pcall() needed here: cjson.safe returns nil instead of raising.
local function load_rules()
  local cached = cache:get("rules")
  if cached then
    return cjson.decode(cached) or DEFAULT_RULES
  end
  return DEFAULT_RULES
end

local function allowed(country, rules)
  for _, code in pairs(rules.allow) do
    if code == country then return true end
  end
  return false
end

function _M.set_rules(json_text)
  local rules = cjson.decode(json_text)
  if type(rules) ~= "table" or type(rules.allow) ~= "table" then
    return nil, "rules must be an object with an allow list"
  end
  return cache:set("rules", json_text, cache_ttl)
end

function _M.enforce()
  local country = ngx.var.http_cf_ipcountry
  if not country or country == "XX" then
    -- unknown country: only block when running in strict mode
    if strict then return ngx.exit(ngx.HTTP_FORBIDDEN) end
    return
  end
  local rules = load_rules()
  if not allowed(country, rules) then
    ngx.status = ngx.HTTP_FORBIDDEN
    ngx.header["Content-Type"] = "text/plain; charset=utf-8"
    ngx.say(rules.block_message)
    return ngx.exit(ngx.HTTP_FORBIDDEN)
  end
end

return _M
