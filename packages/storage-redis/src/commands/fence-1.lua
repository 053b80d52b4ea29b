--[[
  Claims a namespace for a fenced writer: raises the meta hash's 'fence' field to the token, so
  every writer with a lower token is refused from now on (see fenceAllows in includes/lib.lua).

  KEYS[1] meta hash
  ARGV[1] fencing token (a positive integer; the lib's prefix locals read it too, unused here)

  Returns { 0 } when the token is now the namespace's fence, { 12 } when a higher one holds it.
]]
--- @include "lib"

if not fenceAllows(KEYS[1], ARGV[1]) then
  return { FENCED }
end
return { OK }
