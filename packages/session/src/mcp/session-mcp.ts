import type { SandboxSetup } from '@baton/workspace';
import { SessionError } from '../errors.js';
import {
  WorkspacePathError,
  createWorkspaceFiles,
  parseWorkspacePath,
} from '../internal/workspace-path.js';
import type { SessionMcpOptions } from '../types.js';
import { type McpConfig, mergeMcpConfigs, parseMcpConfigText } from './config.js';
import type { SessionSandbox } from '../internal/session-sandbox.js';
import { type McpServerStatus, type McpSession, startMcpServers } from './mcp-servers.js';

/** The largest `.mcp.json` read from a workspace. */
const MAX_REPOSITORY_CONFIG_BYTES = 256 * 1024;

/**
 * The workspace's `.mcp.json`, read as every workspace file Baton reads on the host: no link
 * followed, regular files only, bounded. `undefined` when there is none; a bad one is a note.
 */
async function readRepositoryConfig(
  root: string,
): Promise<{ config?: McpConfig | undefined; problem?: string | undefined }> {
  try {
    const files = createWorkspaceFiles({ root });
    const text = await files.readText(
      parseWorkspacePath(root, '.mcp.json'),
      MAX_REPOSITORY_CONFIG_BYTES,
    );
    return { config: parseMcpConfigText(text, '.mcp.json') };
  } catch (error) {
    if (error instanceof WorkspacePathError && error.code === 'not_found') return {};
    if (error instanceof SessionError) return { problem: error.message };
    return {
      problem: `.mcp.json could not be read (${error instanceof WorkspacePathError ? error.code : 'error'})`,
    };
  }
}

/**
 * Starts the servers of one session from every source (the worker's file, the workspace's
 * `.mcp.json`, the project's configuration) and returns them with one note for the model per
 * server (or configuration) that could not be used. Never throws.
 */
export async function startSessionMcp(options: {
  mcp: SessionMcpOptions | undefined;
  root: string;
  sandbox: SandboxSetup | undefined;
  gitDir: string | undefined;
  sessionSandbox: SessionSandbox;
  maxOutputChars: number | undefined;
  onStatus: (status: McpServerStatus) => Promise<void>;
}): Promise<{ session: McpSession | undefined; notes: string[] }> {
  const mcp = options.mcp ?? {};
  const repository = mcp.repository === false ? {} : await readRepositoryConfig(options.root);
  const servers = mergeMcpConfigs([
    { source: 'worker', config: mcp.worker },
    { source: 'repository', config: repository.config },
    { source: 'project', config: mcp.project },
  ]);
  const notes = repository.problem === undefined ? [] : [`MCP servers: ${repository.problem}.`];
  if (servers.length === 0) return { session: undefined, notes };
  const session = await startMcpServers({
    servers,
    environment: mcp.environment ?? process.env,
    root: options.root,
    sandbox: options.sandbox,
    gitDir: options.gitDir,
    sessionSandbox: options.sessionSandbox,
    startTimeoutMs: mcp.startTimeoutMs,
    maxOutputChars: options.maxOutputChars,
    onStatus: options.onStatus,
  });
  return { session, notes: [...notes, ...session.notes] };
}
