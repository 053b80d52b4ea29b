export { deletePrefix } from './delete-prefix.js';
export { freePort, isPortFree, type FreePortOptions } from './free-port.js';
export { randomHex } from './random-hex.js';
export { REDIS_URL } from './redis-url.js';
export {
  startRedisCluster,
  type RedisClusterNode,
  type RedisClusterOptions,
  type RedisClusterProcesses,
} from './redis-cluster.js';
export { startRedisServer, type RedisServer, type RedisServerOptions } from './redis-server.js';
export { waitFor } from './wait-for.js';
export {
  checkoutFingerprint,
  createBareRemote,
  createHuskyRepo,
  createUserRepo,
  git,
  hostileHookScript,
  plantCanary,
  writeFiles,
} from './git-repos.js';
export {
  startWebhookReceiver,
  type ReceivedRequest,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from './webhook-receiver.js';
export { openCommandMonitor, type CommandMonitor, type SentCommand } from './command-monitor.js';
export { startTcpProxy, type TcpProxy, type TcpProxyOptions } from './tcp-proxy.js';
export { requireCommands } from './require-commands.js';
export { cliWorld, type CliWorld, type Closable } from './cli-world.js';
export {
  workerWorld,
  type WorkerWorld,
  type WorkerWorldOptions,
  type WorkerWorldTarget,
} from './worker-world.js';
