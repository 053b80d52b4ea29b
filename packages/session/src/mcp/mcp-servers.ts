import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { BetaImageBlockParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import {
  type CommandSandbox,
  DEFAULT_SANDBOX_POLICY,
  SANDBOX_PATH,
  type SandboxSetup,
  type FilteringProxy,
  startFilteringProxy,
} from '@baton/workspace';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { shorten, type SessionTool, type ToolOutcome } from '../tools/types.js';
import { bundledServers } from './bundled-servers.js';
import {
  type McpConfigSource,
  type McpServerConfig,
  type McpServerEntry,
  resolveMcpServer,
} from './config.js';
import { DestinationRefusedError, fetchThroughProxy } from './proxied-fetch.js';
import { SandboxStdioTransport } from './sandbox-transport.js';
import { SessionSandbox } from '../internal/session-sandbox.js';

/** The proxy's refusal of a remote server's host, wherever the SDK wrapped it. */
function refusalOf(error: unknown): DestinationRefusedError | undefined {
  for (let current = error, depth = 0; current !== undefined && depth < 5; depth += 1) {
    if (current instanceof DestinationRefusedError) return current;
    current = current instanceof Error ? current.cause : undefined;
  }
  return undefined;
}

/** Where one MCP server stands, as events, `baton status` and the dashboard show it. */
export interface McpServerStatus {
  server: string;
  source: McpConfigSource;
  transport: 'stdio' | 'http';
  /** `ready`: its tools are offered; `failed`: it never started; `exited`: it died mid-session. */
  state: 'ready' | 'failed' | 'exited';
  /** The tool names the model sees (`mcp__<server>__<tool>`), sorted. */
  tools: string[];
  /** One line for people and the model when it failed or exited; never a host path or secret. */
  message?: string | undefined;
}

/** Options of `startMcpServers`. */
export interface StartMcpServersOptions {
  servers: readonly McpServerEntry[];
  /** Where `${VAR}` references are read from: the worker's environment. */
  environment: Readonly<Record<string, string | undefined>>;
  /** Realpath of the workspace: the servers' working directory, read-write as for commands. */
  root: string;
  /** The session's sandbox (policy: allowed hosts, limits). Default: the default sandbox. */
  sandbox?: SandboxSetup | undefined;
  /** Baton's git directory of the workspace, read-only inside as for commands. */
  gitDir?: string | undefined;
  /**
   * The session's sandbox, shared with the bash tool (one loopback); its owner disposes it.
   * Default: the servers get their own, disposed with them.
   */
  sessionSandbox?: SessionSandbox | undefined;
  /** How long a server may take to start and list its tools, in ms. Default 30_000. */
  startTimeoutMs?: number | undefined;
  /** Longest one tool call may take, in ms. Default 120_000. */
  callTimeoutMs?: number | undefined;
  /** Most characters of text one result returns (head kept). Default 30_000. */
  maxOutputChars?: number | undefined;
  /**
   * Resolves a remote server's host name to addresses for the filtering proxy (tests use a
   * fixed table). Default: the host's resolver.
   */
  resolveHost?: ((host: string) => Promise<string[]>) | undefined;
  /** Told of every server's state: at start, and when one exits. Errors it throws are ignored. */
  onStatus?: ((status: McpServerStatus) => Promise<void> | void) | undefined;
}

/** A session's MCP servers: their tools (fixed for the session), states and their end. */
export interface McpSession {
  /** Every ready server's tools, sorted by name. */
  readonly tools: SessionTool[];
  readonly statuses: McpServerStatus[];
  /** One line per server that failed to start, for the model's first message. */
  readonly notes: string[];
  /** Stops every server and every process it started. Never throws. */
  dispose(): Promise<void>;
}

export const DEFAULT_MCP_START_TIMEOUT_MS = 30_000;
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_OUTPUT_CHARS = 30_000;
/** Image types the Messages API takes in an image block. */
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
/** Base64 characters of the largest image sent (the API takes images up to 5 MB). */
const MAX_IMAGE_BASE64 = Math.floor((5 * 1024 * 1024 * 4) / 3);
const MAX_IMAGES_PER_RESULT = 4;
const MAX_DESCRIPTION_CHARS = 4_000;
/** Tool names as the Messages API takes them. */
const API_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** `mcp__<server>__<tool>` within the API's 64 characters of `[a-zA-Z0-9_-]`. */
export function mcpToolName(server: string, tool: string): string {
  const name = `mcp__${server}__${tool}`;
  if (API_TOOL_NAME.test(name)) return name;
  // Changed or cut: a hash of the real name keeps two such tools apart.
  const hash = createHash('sha256').update(tool).digest('hex').slice(0, 8);
  return `${`mcp__${server}__${tool.replace(/[^a-zA-Z0-9_-]/g, '_')}`.slice(0, 55)}_${hash}`;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

/** The last non-empty line a server printed on stderr, cut and redacted. */
function lastLine(text: string): string {
  const line = text
    .split('\n')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .pop();
  return line === undefined ? '' : `: ${shorten(line, 160)}`;
}

class TimeoutError extends Error {}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TimeoutError()), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** The model's view of a tool result: text (capped) and image blocks. */
function toolOutcomeFromResult(result: CallToolResult, maxChars: number): ToolOutcome {
  const texts: string[] = [];
  const images: BetaImageBlockParam[] = [];
  for (const part of result.content ?? []) {
    switch (part.type) {
      case 'text':
        texts.push(part.text);
        break;
      case 'image':
        if (!IMAGE_TYPES.has(part.mimeType)) {
          texts.push(`[an image of type ${shorten(part.mimeType, 40)} was left out]`);
        } else if (part.data.length > MAX_IMAGE_BASE64) {
          texts.push('[an image larger than 5 MB was left out]');
        } else if (images.length >= MAX_IMAGES_PER_RESULT) {
          texts.push('[more images were left out]');
        } else {
          images.push({
            type: 'image',
            source: {
              type: 'base64',
              media_type: part.mimeType as 'image/png',
              data: part.data,
            },
          });
        }
        break;
      case 'resource':
        texts.push(
          'text' in part.resource && typeof part.resource.text === 'string'
            ? part.resource.text
            : `[binary resource ${shorten(part.resource.uri, 200)}]`,
        );
        break;
      case 'resource_link':
        texts.push(`[resource ${shorten(part.uri, 200)}]`);
        break;
      default:
        texts.push(`[${shorten(String((part as { type?: unknown }).type), 40)} content left out]`);
    }
  }
  if (texts.length === 0 && result.structuredContent !== undefined) {
    texts.push(JSON.stringify(result.structuredContent));
  }
  let text = texts.join('\n');
  if (text.length > maxChars) {
    text = `${text.slice(0, maxChars)}\n[... ${text.length - maxChars} characters of output cut ...]`;
  }
  if (text === '') text = images.length > 0 ? '(image)' : '(no output)';
  return {
    content: text,
    isError: result.isError === true,
    ...(images.length > 0 ? { images } : {}),
  };
}

/** One running server: its client and the state shown to people. */
class RunningServer {
  exitMessage: string | undefined;
  #disposing = false;
  readonly #onExit: (status: McpServerStatus) => void;

  constructor(
    readonly status: McpServerStatus,
    readonly client: Client,
    readonly transport: Transport,
    onExit: (status: McpServerStatus) => void,
  ) {
    this.#onExit = onExit;
    // The client's own handler (set by connect) fails the calls in flight; this one is told after.
    client.onclose = () => {
      if (this.#disposing) return;
      const stderr =
        transport instanceof SandboxStdioTransport ? lastLine(transport.stderrTail) : '';
      this.exitMessage = `MCP server ${status.server} exited and is unavailable for the rest of this session${stderr}`;
      this.status.state = 'exited';
      this.status.message = this.exitMessage;
      this.#onExit(this.status);
    };
  }

  async stop(): Promise<void> {
    this.#disposing = true;
    try {
      await this.client.close();
    } catch {
      // Gone already.
    }
  }
}

function toSessionTool(
  running: RunningServer,
  tool: Tool,
  name: string,
  options: { callTimeoutMs: number; maxOutputChars: number },
): SessionTool {
  const server = running.status.server;
  const description = `[MCP server ${server}] ${tool.description ?? tool.title ?? tool.name}`.slice(
    0,
    MAX_DESCRIPTION_CHARS,
  );
  return {
    name,
    definition: {
      name,
      description,
      input_schema: tool.inputSchema as { type: 'object'; [key: string]: unknown },
    },
    lane: `mcp:${server}`,
    timeLimitMs: options.callTimeoutMs + 10_000,
    summarize: (input) => `${tool.name} ${shorten(JSON.stringify(input ?? {}), 70)}`,
    async execute(input, signal) {
      if (running.exitMessage !== undefined) {
        return { content: `Error: ${running.exitMessage}.`, isError: true };
      }
      try {
        const result = (await running.client.callTool(
          {
            name: tool.name,
            arguments: (typeof input === 'object' && input !== null ? input : {}) as Record<
              string,
              unknown
            >,
          },
          undefined,
          {
            timeout: options.callTimeoutMs,
            // eslint-disable-next-line no-restricted-syntax -- the MCP SDK's `RequestOptions.signal?: AbortSignal` refuses undefined
            ...(signal === undefined ? {} : { signal }),
          },
        )) as CallToolResult;
        return toolOutcomeFromResult(result, options.maxOutputChars);
      } catch (error) {
        if (running.exitMessage !== undefined) {
          return { content: `Error: ${running.exitMessage}.`, isError: true };
        }
        const message = error instanceof Error ? error.message : String(error);
        return {
          content: `Error: MCP server ${server}: ${shorten(message, 300)}`,
          isError: true,
        };
      }
    },
  };
}

/** The whole list of a server's tools (following `nextCursor`). */
async function listAllTools(client: Client, timeoutMs: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page += 1) {
    const result = await client.listTools(
      { cursor },
      {
        timeout: timeoutMs,
      },
    );
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined) break;
  }
  return tools;
}

/**
 * Starts a session's MCP servers: stdio servers inside the session's sandbox (the workspace
 * read-write, the project's allowed hosts, the limits; Baton's bundled servers through `npx`),
 * remote HTTP servers only at an allowed host. Each gets `startTimeoutMs` to answer `initialize`
 * and list its tools; a server that fails, hangs, prints no protocol or dies is reported in one
 * line (its status and a note for the model) and the session goes on without it. Never throws.
 */
export async function startMcpServers(options: StartMcpServersOptions): Promise<McpSession> {
  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_MCP_START_TIMEOUT_MS;
  const callOptions = {
    callTimeoutMs: options.callTimeoutMs ?? DEFAULT_MCP_CALL_TIMEOUT_MS,
    maxOutputChars: options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
  };
  const setup: SandboxSetup = options.sandbox ?? {
    mode: 'bubblewrap',
    policy: DEFAULT_SANDBOX_POLICY,
  };
  const policy = setup.policy ?? DEFAULT_SANDBOX_POLICY;
  const statuses: McpServerStatus[] = [];
  const running: RunningServer[] = [];
  const notify = async (status: McpServerStatus) => {
    try {
      await options.onStatus?.({ ...status, tools: [...status.tools] });
    } catch {
      // Observers never stop the session.
    }
  };
  const shared = options.sessionSandbox;
  const sandbox =
    shared ?? new SessionSandbox({ root: options.root, setup, gitDir: options.gitDir });
  let proxy: Promise<FilteringProxy> | undefined;
  let proxyDirectory: string | undefined;

  const startOne = async (entry: McpServerEntry): Promise<SessionTool[]> => {
    const status: McpServerStatus = {
      server: entry.name,
      source: entry.source,
      transport: entry.config.type === 'http' ? 'http' : 'stdio',
      state: 'failed',
      tools: [],
    };
    statuses.push(status);
    const fail = async (why: string) => {
      status.message = `MCP server ${entry.name} is unavailable: ${why}`;
      await notify(status);
      return [];
    };
    const resolved = resolveMcpServer(entry, options.environment);
    if (!resolved.ok) return fail(resolved.message);
    let transport: Transport;
    try {
      transport = await openTransport(resolved.config);
    } catch (error) {
      return fail(error instanceof Error ? error.message : 'it could not start');
    }
    const client = new Client({ name: 'baton', version: '0.1.0' }, { capabilities: {} });
    let tools: Tool[];
    try {
      await withTimeout(
        (async () => {
          await client.connect(transport, { timeout: startTimeoutMs });
          tools = await listAllTools(client, startTimeoutMs);
        })(),
        startTimeoutMs,
      );
    } catch (error) {
      const stdio = transport instanceof SandboxStdioTransport ? transport : undefined;
      await client.close().catch(() => undefined);
      await transport.close().catch(() => undefined);
      const stderr = stdio === undefined ? '' : lastLine(stdio.stderrTail);
      const refused = refusalOf(error);
      if (refused !== undefined) return fail(refused.message);
      if (stdio !== undefined && stdio.garbageLines > 0) {
        return fail(
          `it printed ${stdio.garbageLines} line(s) that are not MCP messages and never answered${stderr}`,
        );
      }
      if (error instanceof TimeoutError || /timed? ?out/i.test(String(error))) {
        return fail(`it did not answer within ${seconds(startTimeoutMs)}${stderr}`);
      }
      return fail(`it exited or refused to start${stderr}`);
    }
    const server = new RunningServer(status, client, transport, (exited) => void notify(exited));
    running.push(server);
    const names = new Set<string>();
    const sessionTools = tools!
      .map((tool) => {
        let name = mcpToolName(entry.name, tool.name);
        if (names.has(name)) name = mcpToolName(entry.name, `${tool.name}#${names.size}`);
        names.add(name);
        return toSessionTool(server, tool, name, callOptions);
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    status.state = 'ready';
    status.tools = sessionTools.map((tool) => tool.name);
    await notify(status);
    return sessionTools;
  };

  const openTransport = async (config: McpServerConfig): Promise<Transport> => {
    if (config.type === 'http') {
      const url = new URL(config.url);
      if (setup.mode === 'off') {
        return new StreamableHTTPClientTransport(url, {
          requestInit: { headers: config.headers ?? {} },
        });
      }
      // Remote servers go through a filtering proxy of the sandbox's own kind: the project's
      // allowed hosts and ports, no IP literal, no name resolving to loopback or a private address.
      proxy ??= (async () => {
        const directory = await mkdtemp(path.join(os.tmpdir(), 'baton-mcp-proxy-'));
        proxyDirectory = directory;
        return startFilteringProxy({
          socketPath: path.join(directory, 'proxy.sock'),
          allowedHosts: policy.network.allowedHosts,
          allowedPorts: policy.network.allowedPorts,
          resolve: options.resolveHost,
        });
      })();
      const { socketPath } = await proxy;
      return new StreamableHTTPClientTransport(url, {
        requestInit: { headers: config.headers ?? {} },
        fetch: fetchThroughProxy(socketPath),
      });
    }
    let commands: CommandSandbox;
    try {
      commands = await sandbox.open();
    } catch {
      throw new Error('commands cannot be sandboxed on this worker');
    }
    const bundled = bundledServers();
    const hostPath = setup.mode === 'off' ? (process.env.PATH ?? SANDBOX_PATH) : SANDBOX_PATH;
    const child = commands.startProcess([config.command, ...(config.args ?? [])], {
      env: {
        PATH: `${bundled.binDirectory}:${hostPath}`,
        PLAYWRIGHT_MCP_CONFIG: bundled.playwrightConfig,
        ...config.env,
      },
      readOnlyPaths: [bundled.binDirectory, ...bundled.readOnlyPaths],
    });
    return new SandboxStdioTransport(child);
  };

  const toolLists = await Promise.all(options.servers.map((entry) => startOne(entry)));
  const tools = toolLists.flat().sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  statuses.sort((a, b) => (a.server < b.server ? -1 : 1));
  return {
    tools,
    statuses,
    notes: statuses
      .filter((status) => status.state === 'failed' && status.message !== undefined)
      .map((status) => `${status.message}.`),
    async dispose() {
      await Promise.all(running.map((server) => server.stop()));
      if (shared === undefined) await sandbox.dispose();
      const remote = await proxy?.catch(() => undefined);
      await remote?.close();
      if (proxyDirectory !== undefined) await rm(proxyDirectory, { recursive: true, force: true });
    },
  };
}
