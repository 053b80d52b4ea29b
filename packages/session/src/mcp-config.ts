// A light entry: the MCP configuration's schema without the session runner, the SDK or the
// sandbox, for the domain vocabulary (`@baton/projects/schema`) to validate a project's `mcp` field.
export { mcpConfigSchema } from './mcp/config.js';
export type { McpConfig } from './mcp/config.js';
