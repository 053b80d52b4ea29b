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
export type { LuaScript, LuaScripts, LuaScriptsOptions } from './lua-scripts.js';
export {
  DEFAULT_REDIS_URL,
  RedisTargetError,
  answersPing,
  closeRedisConnection,
  createRedisConnection,
  describeRedisClient,
  describeRedisTarget,
  duplicateConnection,
  isCluster,
  memoryConnectionOptions,
  parseClusterNodes,
  parseRedisUrl,
  producerConnectionOptions,
  readRedisTarget,
  redactUrl,
  redisTargetEnvironment,
  waitForRedis,
  workerConnectionOptions,
  type ConnectionTuning,
  type RedisClient,
  type RedisClusterNode,
  type RedisTarget,
} from './redis-connection.js';
