-- Reply codes shared with src/internal/status.ts (keep the two in step).
local CREATED = 1
local EXISTS = 0
local MOVED = 1
local NOT_ALLOWED = 0
local MISSING = -1
local OWNED = 1
local NOT_OWNED = 0
local FENCED = -2
