import { readFileSync } from 'node:fs';
import { containsSecret } from '@baton/core/store-kit';
import { z } from 'zod';
import { SessionError } from '../errors.js';

/**
 * The one schema of MCP server configuration, in the format Claude Code reads from `.mcp.json`:
 * `{"mcpServers": {"name": {"command", "args", "env"}}}` for a server Baton starts in the
 * session's sandbox, `{"type": "http", "url", "headers"}` for a remote one. The same schema
 * validates a repository's `.mcp.json`, `--mcp-config <file>`, the control API's and dashboard's
 * `mcp` field and the worker-wide file (`BATON_MCP_CONFIG`).
 *
 * Secrets are never written in it: `env`, `headers`, `args` and `url` may refer to the worker's
 * environment as `${VAR}` (or `${VAR:-default}`), resolved when a session starts
 * (`resolveMcpServer`) and kept nowhere else. A literal value that looks like a secret is refused.
 */

/**
 * A server's name: part of every tool name the model sees (`mcp__<server>__<tool>`, at most 64
 * characters of `[a-zA-Z0-9_-]`), so plain and short, and without `__`, which separates the parts.
 */
export const MCP_SERVER_NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_)){0,31}$/;

// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

const text = (max: number) =>
  z
    .string()
    .max(max, `is longer than ${max} characters`)
    .refine((value) => !CONTROL_CHARACTERS.test(value), 'contains control characters');

const noLiteralSecret = (value: string) => !containsSecret(value);
const SECRET_MESSAGE =
  'looks like a secret: write a ${VAR} reference and set VAR in the worker environment';

const variableMap = z
  .record(
    z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be an environment variable name'),
    text(8_192).refine(noLiteralSecret, SECRET_MESSAGE),
  )
  .refine((value) => Object.keys(value).length <= 64, 'has more than 64 entries');

/** A server Baton starts inside the session's sandbox and talks to over stdin/stdout. */
const mcpStdioServerSchema = z.strictObject({
  type: z.literal('stdio').optional(),
  /** The program, found on the sandbox's PATH (`npx <package>` runs Baton's installed copy). */
  command: text(1_024).pipe(z.string().trim().min(1, 'must not be empty')),
  /** Its arguments. Default none. */
  args: z.array(text(8_192).refine(noLiteralSecret, SECRET_MESSAGE)).max(256).optional(),
  /** Environment variables it gets besides the sandbox's clean environment. Default none. */
  env: variableMap.optional(),
});

/** A remote server reached over Streamable HTTP, only at a host the project allows. */
const mcpHttpServerSchema = z.strictObject({
  type: z.literal('http'),
  url: text(2_048).refine(
    (value) => /^https?:\/\/[^\s/]+/i.test(value),
    'must be an http:// or https:// URL',
  ),
  /** Request headers (an `Authorization: Bearer ${TOKEN}`). Default none. */
  headers: variableMap.optional(),
});

const mcpServerSchema = z.union([mcpStdioServerSchema, mcpHttpServerSchema], {
  error: (issue) =>
    issue.code === 'invalid_union'
      ? 'must be {"command", "args", "env"} (a server Baton starts) or {"type": "http", "url"} (a remote one)'
      : undefined,
});

export const mcpConfigSchema = z.strictObject({
  mcpServers: z
    .record(
      z
        .string()
        .regex(
          MCP_SERVER_NAME_PATTERN,
          'server names are 1-32 letters, digits, "-" or "_" (no "__"), starting with a letter or digit',
        ),
      mcpServerSchema,
      {
        // A bad name's own rule, not zod's "Invalid key in record": every caller (the control
        // API's generic formatting too) then names the rule in its one line.
        error: (issue) =>
          issue.code === 'invalid_key'
            ? issue.issues[0]?.message
            : issue.input === undefined
              ? 'is required: a configuration is {"mcpServers": {"<name>": {"command": ...}}}'
              : undefined,
      },
    )
    .refine((value) => Object.keys(value).length <= 16, 'has more than 16 servers'),
});

export type McpStdioServer = z.output<typeof mcpStdioServerSchema>;
export type McpHttpServer = z.output<typeof mcpHttpServerSchema>;
export type McpServerConfig = z.output<typeof mcpServerSchema>;
/** A validated MCP configuration: `{ mcpServers: { name: server } }`. */
export type McpConfig = z.output<typeof mcpConfigSchema>;

/** Where a server's configuration came from, lowest precedence first. */
export type McpConfigSource = 'worker' | 'repository' | 'project';

/** One line naming the first problem of a configuration, as `what.mcpServers.x.command: ...`. */
function firstIssue(error: z.ZodError, what: string): string {
  let issue = error.issues[0];
  if (issue === undefined) return `${what} is invalid`;
  // A bad server name: zod reports the record key with the name's own issue inside.
  if (issue.code === 'invalid_key' && issue.issues[0] !== undefined) {
    issue = { ...issue, message: issue.issues[0].message };
  }
  const at = issue.path.map(String).join('.');
  return `${what}: ${at === '' ? '' : `${at}: `}${issue.message}`;
}

/** Validates a configuration; throws `SessionError('invalid_options')` in one line naming the field. */
export function parseMcpConfig(input: unknown, what = 'mcp'): McpConfig {
  const parsed = mcpConfigSchema.safeParse(input);
  if (!parsed.success) throw new SessionError('invalid_options', firstIssue(parsed.error, what));
  return parsed.data;
}

/** Parses the text of a `.mcp.json` file (`what` names it in the error). */
export function parseMcpConfigText(textValue: string, what: string): McpConfig {
  let json: unknown;
  try {
    json = JSON.parse(textValue);
  } catch {
    throw new SessionError('invalid_options', `${what} is not valid JSON`);
  }
  return parseMcpConfig(json, what);
}

/** The variable naming the worker-wide MCP configuration file. */
export const MCP_CONFIG_ENV_VARIABLE = 'BATON_MCP_CONFIG';

/**
 * Reads and validates an MCP configuration file (`--mcp-config`, `BATON_MCP_CONFIG`); `what`
 * names it in the one-line error (`SessionError('invalid_options')`).
 */
export function loadMcpConfigFile(file: string, what: string): McpConfig {
  let textValue: string;
  try {
    textValue = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new SessionError('invalid_options', `${what} cannot be read (${code})`);
  }
  return parseMcpConfigText(textValue, what);
}

/** One server with where its configuration came from. */
export interface McpServerEntry {
  name: string;
  source: McpConfigSource;
  config: McpServerConfig;
}

/**
 * The servers of one session: the worker's file, then the repository's `.mcp.json`, then the
 * project's own configuration; a later source replaces a server of the same name. Sorted by name,
 * so the tool list (part of the cached prompt prefix) does not depend on the order of sources.
 */
export function mergeMcpConfigs(
  sources: ReadonlyArray<{ source: McpConfigSource; config: McpConfig | undefined }>,
): McpServerEntry[] {
  const byName = new Map<string, McpServerEntry>();
  for (const { source, config } of sources) {
    for (const [name, server] of Object.entries(config?.mcpServers ?? {})) {
      byName.set(name, { name, source, config: server });
    }
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** The variable names a value refers to. */
function references(value: string): string[] {
  return [...value.matchAll(REFERENCE)].map((match) => match[1] ?? '');
}

/**
 * A server's configuration with `${VAR}` references replaced from `environment` (the worker's).
 * A reference to an unset variable without a default fails the server, in one line naming the
 * variable. Configuration from the repository (`source: 'repository'`) is written by anyone who
 * can write the repository, the agent included: its references are never resolved, so a
 * `.mcp.json` cannot copy the worker's secrets into the sandbox.
 */
export function resolveMcpServer(
  entry: McpServerEntry,
  environment: Readonly<Record<string, string | undefined>>,
): { ok: true; config: McpServerConfig } | { ok: false; message: string } {
  const problems: string[] = [];
  const resolve = (value: string): string =>
    value.replace(REFERENCE, (_whole, name: string, fallback: string | undefined) => {
      if (entry.source === 'repository') {
        problems.push(
          `\${${name}} in the repository's .mcp.json is not expanded (declare the server in --mcp-config or the worker's file to give it secrets)`,
        );
        return '';
      }
      const value = environment[name];
      if (value !== undefined && value !== '') return value;
      if (fallback !== undefined) return fallback;
      problems.push(`\${${name}} is not set in the worker's environment`);
      return '';
    });
  const map = (record: Readonly<Record<string, string>> | undefined) =>
    record === undefined
      ? undefined
      : Object.fromEntries(Object.entries(record).map(([key, value]) => [key, resolve(value)]));
  const config = entry.config;
  const resolved: McpServerConfig =
    config.type === 'http'
      ? {
          type: 'http',
          url: resolve(config.url),
          headers: map(config.headers),
        }
      : {
          command: resolve(config.command),
          args: config.args?.map(resolve),
          env: map(config.env),
        };
  if (problems.length > 0) return { ok: false, message: problems[0] ?? 'unresolved reference' };
  return { ok: true, config: resolved };
}

/** Every `${VAR}` a configuration refers to (for docs and checks; values are never shown). */
export function mcpConfigReferences(config: McpConfig): string[] {
  const names = new Set<string>();
  for (const server of Object.values(config.mcpServers)) {
    const values =
      server.type === 'http'
        ? [server.url, ...Object.values(server.headers ?? {})]
        : [server.command, ...(server.args ?? []), ...Object.values(server.env ?? {})];
    for (const value of values) for (const name of references(value)) names.add(name);
  }
  return [...names].sort();
}

/** What people are shown of a server: its name, where it came from and what runs, never values. */
export function describeMcpServer(entry: McpServerEntry): string {
  const { config } = entry;
  if (config.type === 'http') {
    let host = config.url;
    try {
      host = new URL(config.url.replace(REFERENCE, 'x')).host;
    } catch {
      // Shown as written.
    }
    return `${entry.name} (http ${host}, ${entry.source})`;
  }
  return `${entry.name} (${config.command}${config.args?.[0] === undefined ? '' : ` ${config.args[0]}`}, ${entry.source})`;
}
