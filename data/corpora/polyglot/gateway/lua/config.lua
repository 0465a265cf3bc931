-- Gateway settings. Values can be overridden from the environment at init
-- time (see init_by_lua_block in conf/nginx.conf); everything else is fixed.
local os = os

local default_limit = 120
local legacy_limit = 30
local window_seconds = 60
local strict_geo = false
local token_leeway = 30

local _M = {}

local function env_number(name, fallback)
  local raw = os.getenv(name)
  local value = raw and tonumber(raw)
  return value or fallback
end

function _M.load()
  return {
    limit = env_number("GATEWAY_RATE_LIMIT", default_limit),
    legacy_limit = env_number("GATEWAY_LEGACY_LIMIT", legacy_limit),
    window = env_number("GATEWAY_WINDOW", window_seconds),
    strict_geo = os.getenv("GATEWAY_STRICT_GEO") == "1" or strict_geo,
    token_leeway = env_number("GATEWAY_TOKEN_LEEWAY", token_leeway),
  }
end

return _M
