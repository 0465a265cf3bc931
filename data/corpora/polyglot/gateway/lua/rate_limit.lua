-- Fixed-window rate limit per client IP, kept in the rate_limit shared dict.
-- Old app builds (User-Agent KaffeeApp/1.x) get a lower limit.
local ngx = ngx
local shared = ngx.shared.rate_limit

local limit = 120
local legacy_limit = 30
local window = 60

local _M = {}

local function key_for(ip, now)
  return ip .. ":" .. math.floor(now / window)
end

local function limit_for(user_agent)
  if user_agent and user_agent:find("^KaffeeApp/1%.") then
    return legacy_limit
  end
  return limit
end

function _M.check()
  local now = ngx.now()
  local key = key_for(ngx.var.remote_addr, now)
  -- incr with init so the first request of a window creates the key;
  -- pcall because a full dict raises "no memory" instead of returning an error
  local ok, count, err = pcall(function()
    return shared:incr(key, 1, 0, window)
  end)
  if not ok or not count then
    ngx.log(ngx.WARN, "rate limit disabled for this request: ", err or count)
    return
  end
  if count > limit_for(ngx.var.http_user_agent) then
    ngx.header["Retry-After"] = window - (now % window)
    return ngx.exit(ngx.HTTP_TOO_MANY_REQUESTS)
  end
end

-- Used by the admin endpoint; xpcall so that we get a traceback in the log.
function _M.reset(ip)
  return xpcall(function()
    shared:delete(key_for(ip, ngx.now()))
  end, debug.traceback)
end

return _M
