export {
  createDashboardServer,
  DASHBOARD_ENV_VARIABLES,
  DEFAULT_DASHBOARD_HOST,
  DEFAULT_DASHBOARD_PORT,
  isLoopbackHost,
  MIN_TOKEN_LENGTH,
  QUEUE_UI_MODES,
} from './server.js';
export type { DashboardServer, DashboardServerOptions, QueueUiMode } from './server.js';
export { DashboardError, isDashboardError } from './errors.js';
export type { DashboardErrorCode, DashboardErrorOptions } from './errors.js';
export type { DashboardControl, DashboardMemoryStore } from './control.js';
export { renderMarkdown } from './internal/markdown.js';
export { createDashboardLogger } from './internal/logger.js';
