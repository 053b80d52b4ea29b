export {
  createRedisMemoryStore,
  DEFAULT_CONNECTION_OPTIONS,
  RedisMemoryStore,
} from './redis-memory-store.js';
export type {
  FileVersion,
  MemoryFence,
  ReadChangesOptions,
  RedisMemoryChange,
  RedisMemoryStoreOptions,
  SweepOptions,
  SweepResult,
} from './redis-memory-store.js';
export { createNamespaceKeys, DEFAULT_KEY_PREFIX } from './keys.js';
export type { NamespaceKeys } from './keys.js';
export { createLuaScripts } from './lua-scripts.js';
export { moveContentToBodies } from './move-content-to-bodies.js';
export type { MoveContentToBodiesOptions } from './move-content-to-bodies.js';
export type { LuaScript, LuaScripts, LuaScriptsOptions, RedisClient } from './lua-scripts.js';
