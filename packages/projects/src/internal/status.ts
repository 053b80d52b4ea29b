/**
 * Reply codes of the Lua scripts in `src/commands/` (declared for Lua in
 * `commands/includes/status.lua`): the one place a number from a script gets its meaning.
 */
export const SCRIPT_STATUS = {
  created: 1,
  exists: 0,
  moved: 1,
  notAllowed: 0,
  missing: -1,
  owned: 1,
  notOwned: 0,
  fenced: -2,
} as const;
