-- Sessions in Lua: a profile taken from a session remembers the session's
-- symbolizer (fed by the same records), so reports on it name functions of
-- processes that have since exited.
return function(perf)
  local S, P = perf.core.Session, perf.core.Profile
  if type(S) ~= "table" or type(P) ~= "table" then return end
  local symbolizer_of = setmetatable({}, { __mode = "k" })
  local profile = S.profile
  function S.profile(s)
    local p, err, errno = profile(s)
    if p then symbolizer_of[p] = s:symbolizer() end
    return p, err, errno
  end
  -- The symbolizer that was fed alongside the profile, or nil.
  function P.symbolizer(p)
    return symbolizer_of[p]
  end
end
