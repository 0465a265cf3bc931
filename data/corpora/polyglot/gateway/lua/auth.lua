-- Bearer-token check for /api/. Tokens are JWTs signed with HS256 by the shop.
-- Everything that can raise is wrapped in pcall() so that a malformed token
-- becomes a 401, never a 500.
local ngx = ngx
local cjson = require "cjson.safe"
local hmac = require "resty.hmac"
local b64 = require "ngx.base64"

local type = type
local tostring = tostring

local _M = {}

local secret

function _M.init()
  secret = os.getenv("JWT_SECRET")
  if not secret or secret == "" then
    ngx.log(ngx.ERR, "JWT_SECRET is not set; every request will be rejected")
  end
end

local function decode_segment(segment)
  local raw = b64.decode_base64url(segment)
  if not raw then return nil end
  return cjson.decode(raw)
end

local function verify(token)
  local header, payload, signature = token:match("^([^.]+)%.([^.]+)%.([^.]+)$")
  if not header then return nil, "malformed" end

  local ok, expected = pcall(hmac.sign, secret, header .. "." .. payload, "sha256")
  if not ok then return nil, "hmac failed: " .. tostring(expected) end
  if b64.encode_base64url(expected) ~= signature then return nil, "bad signature" end

  local claims = decode_segment(payload)
  if type(claims) ~= "table" then return nil, "bad payload" end
  if claims.exp and claims.exp < ngx.time() then return nil, "expired" end
  return claims
end

function _M.check()
  local auth = ngx.var.http_authorization
  if not auth or auth:sub(1, 7) ~= "Bearer " then
    return ngx.exit(ngx.HTTP_UNAUTHORIZED)
  end
  local ok, claims, err = pcall(verify, auth:sub(8))
  if not ok or not claims then
    ngx.log(ngx.INFO, "rejected token: ", err or claims)
    return ngx.exit(ngx.HTTP_UNAUTHORIZED)
  end
  ngx.req.set_header("X-Customer-Id", tostring(claims.sub))
end

return _M
