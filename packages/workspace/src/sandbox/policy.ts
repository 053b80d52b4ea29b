import { z } from 'zod';
import { WorkspaceError } from '../errors.js';

/**
 * A host name a project may reach through the filtering proxy: `registry.npmjs.org`, or
 * `*.example.com` for every subdomain of `example.com` (not `example.com` itself). No schemes,
 * ports, paths or IP addresses: the allow-list names services, and an address would bypass the
 * proxy's refusal of loopback and private destinations.
 */
const hostPattern = z
  .string()
  .trim()
  .toLowerCase()
  .refine(
    (value) =>
      /^(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(
        value,
      ) &&
      !/^[\d.]+$/.test(value) &&
      value.length <= 253,
    {
      message:
        'must be a host name such as registry.npmjs.org or *.example.com (no scheme, port, path or IP address)',
    },
  );

/** An absolute host path, without `..`, that commands may read (a toolchain under /opt, ...). */
const hostPath = z
  .string()
  .refine((value) => value.startsWith('/') && !value.split('/').includes('..') && value !== '/', {
    message: 'must be an absolute path other than / and without ".."',
  });

/** Resource limits of each command (all its processes together). */
const sandboxLimitsSchema = z.strictObject({
  /** Wall clock of one command in ms; every process of it is killed then. Default 120_000. */
  commandTimeoutMs: z.number().int().min(100).max(86_400_000).default(120_000),
  /** Memory of one command in MiB (all its processes). Default 2048. */
  memoryMb: z.number().int().min(16).max(1_048_576).default(2048),
  /** Processes and threads one command may have at once. Default 512. */
  processes: z.number().int().min(8).max(100_000).default(512),
  /**
   * Disk the project's workspace may use, in MiB, counted as `du` does: a command that goes over
   * is stopped, and no checkpoint is committed until files are deleted. Default 4096.
   */
  workspaceMb: z.number().int().min(1).max(16_777_216).default(4096),
  /** Files, directories and links the project's workspace may hold, as for `workspaceMb`. Default 200_000. */
  workspaceFiles: z.number().int().min(10).max(1_000_000_000).default(200_000),
});

/** Network of commands: none, or named hosts through the filtering proxy. */
const sandboxNetworkSchema = z.strictObject({
  /** Hosts reachable over HTTP(S) through the proxy; empty = no network at all. Default []. */
  allowedHosts: z.array(hostPattern).max(256).default([]),
  /** Ports the proxy connects to on allowed hosts. Default [80, 443]. */
  allowedPorts: z.array(z.number().int().min(1).max(65535)).max(64).default([80, 443]),
});

/** What of the host commands see besides the system directories, the workspace and their tmp. */
const sandboxFilesystemSchema = z.strictObject({
  /** Extra host paths mounted read-only at the same place (a toolchain under /opt). Default []. */
  readOnlyPaths: z.array(hostPath).max(64).default([]),
});

/**
 * The sandbox policy of one session's commands: the worker's policy (`BATON_SANDBOX`) with the
 * project's overrides applied (`resolveSandboxPolicy`).
 */
export const sandboxPolicySchema = z.strictObject({
  filesystem: sandboxFilesystemSchema.default(sandboxFilesystemSchema.parse({})),
  network: sandboxNetworkSchema.default(sandboxNetworkSchema.parse({})),
  limits: sandboxLimitsSchema.default(sandboxLimitsSchema.parse({})),
});

/** A resolved sandbox policy (every field present). */
export type SandboxPolicy = z.output<typeof sandboxPolicySchema>;
/** A policy as written by a user (every field optional; defaults fill the rest). */
export type SandboxPolicyInput = z.input<typeof sandboxPolicySchema>;

/** The default policy: no network, no extra paths, 120 s / 2 GiB / 512 processes per command. */
export const DEFAULT_SANDBOX_POLICY: SandboxPolicy = sandboxPolicySchema.parse({});

/**
 * What a project may change of its worker's policy: hosts it needs (added to the worker's),
 * extra read-only paths, and limits (each at most the worker's, so a project cannot lift them).
 */
export const projectSandboxSchema = z.strictObject({
  allowedHosts: z.array(hostPattern).max(256).optional(),
  allowedPorts: z.array(z.number().int().min(1).max(65535)).max(64).optional(),
  readOnlyPaths: z.array(hostPath).max(64).optional(),
  limits: sandboxLimitsSchema.partial().optional(),
});

/** A project's sandbox settings (`sandbox` in the project). */
export type ProjectSandbox = z.output<typeof projectSandboxSchema>;

function issuesLine(error: z.ZodError, what: string): string {
  return error.issues
    .map((issue) => {
      const at = issue.path.map(String).join('.');
      return `${what}${at === '' ? '' : `.${at}`} ${issue.message}`;
    })
    .join('; ');
}

/** Validate a policy; throws `WorkspaceError('invalid_sandbox_policy')` naming each wrong field. */
export function parseSandboxPolicy(input: unknown, what = 'sandbox'): SandboxPolicy {
  const parsed = sandboxPolicySchema.safeParse(input);
  if (!parsed.success) {
    throw new WorkspaceError('invalid_sandbox_policy', issuesLine(parsed.error, what));
  }
  return parsed.data;
}

/** Validate a project's sandbox settings; throws `WorkspaceError('invalid_sandbox_policy')`. */
export function parseProjectSandbox(input: unknown, what = 'sandbox'): ProjectSandbox {
  const parsed = projectSandboxSchema.safeParse(input);
  if (!parsed.success) {
    throw new WorkspaceError('invalid_sandbox_policy', issuesLine(parsed.error, what));
  }
  return parsed.data;
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

/** The policy one project's sessions run under: the worker's, with the project's settings applied. */
export function resolveSandboxPolicy(
  worker: SandboxPolicy,
  project: ProjectSandbox | undefined,
): SandboxPolicy {
  if (project === undefined) return worker;
  const limits = project.limits ?? {};
  return {
    filesystem: {
      readOnlyPaths: unique([...worker.filesystem.readOnlyPaths, ...(project.readOnlyPaths ?? [])]),
    },
    network: {
      allowedHosts: unique([...worker.network.allowedHosts, ...(project.allowedHosts ?? [])]),
      allowedPorts: unique([...worker.network.allowedPorts, ...(project.allowedPorts ?? [])]),
    },
    limits: {
      commandTimeoutMs: Math.min(
        worker.limits.commandTimeoutMs,
        limits.commandTimeoutMs ?? Number.POSITIVE_INFINITY,
      ),
      memoryMb: Math.min(worker.limits.memoryMb, limits.memoryMb ?? Number.POSITIVE_INFINITY),
      processes: Math.min(worker.limits.processes, limits.processes ?? Number.POSITIVE_INFINITY),
      workspaceMb: Math.min(
        worker.limits.workspaceMb,
        limits.workspaceMb ?? Number.POSITIVE_INFINITY,
      ),
      workspaceFiles: Math.min(
        worker.limits.workspaceFiles,
        limits.workspaceFiles ?? Number.POSITIVE_INFINITY,
      ),
    },
  };
}

/** How a worker or `baton run` runs commands, from `BATON_SANDBOX` and `--no-sandbox`. */
export type SandboxSetting =
  | { mode: 'on'; policy: SandboxPolicy }
  /** The operator opted out: commands run on the host with a clean environment only. */
  | { mode: 'off' };

/**
 * Read `BATON_SANDBOX`: unset, empty or `on` = the default policy; `off` = no sandbox; a JSON
 * object = a policy (`{"network":{"allowedHosts":["registry.npmjs.org"]}}`). `noSandbox` is the
 * `--no-sandbox` flag and wins. Throws `WorkspaceError('invalid_sandbox_policy')` on bad input.
 */
export function parseSandboxSetting(
  value: string | undefined,
  options: { noSandbox?: boolean } = {},
): SandboxSetting {
  if (options.noSandbox === true) return { mode: 'off' };
  const text = value?.trim() ?? '';
  if (text === '' || /^(on|1|true|yes)$/i.test(text)) {
    return { mode: 'on', policy: DEFAULT_SANDBOX_POLICY };
  }
  if (/^(off|0|false|no)$/i.test(text)) return { mode: 'off' };
  if (!text.startsWith('{')) {
    throw new WorkspaceError(
      'invalid_sandbox_policy',
      `BATON_SANDBOX must be on, off or a JSON policy object, got "${text.slice(0, 40)}"`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new WorkspaceError('invalid_sandbox_policy', 'BATON_SANDBOX is not valid JSON');
  }
  return { mode: 'on', policy: parseSandboxPolicy(json, 'BATON_SANDBOX') };
}
