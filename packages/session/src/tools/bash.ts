import {
  type CommandResult,
  type CommandSandbox,
  DEFAULT_SANDBOX_POLICY,
  readOnlyGitNote,
} from '@baton/workspace';
import { checkCommand } from '../internal/command-policy.js';
import { SessionSandbox } from '../internal/session-sandbox.js';
import {
  shorten,
  stringField,
  type SessionTool,
  type ToolOutcome,
  type WorkspaceToolsOptions,
} from './types.js';

const DEFAULT_MAX_OUTPUT_CHARS = 30_000;

/** Keeps the head and the tail of a long output within a character budget. */
class CappedOutput {
  #head = '';
  #tail = '';
  #dropped = 0;
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  push(chunk: string): void {
    const half = Math.floor(this.#max / 2);
    if (this.#head.length < half) {
      const room = half - this.#head.length;
      this.#head += chunk.slice(0, room);
      chunk = chunk.slice(room);
    }
    if (chunk === '') return;
    this.#tail += chunk;
    if (this.#tail.length > 2 * half) {
      this.#dropped += this.#tail.length - half;
      this.#tail = this.#tail.slice(-half);
    }
  }

  text(): string {
    if (this.#dropped === 0) return this.#head + this.#tail;
    const excess = Math.max(0, this.#tail.length - Math.floor(this.#max / 2));
    const dropped = this.#dropped + excess;
    return `${this.#head}\n[... ${dropped} characters of output cut ...]\n${this.#tail.slice(excess)}`;
  }
}

/** Options of `createBashTool`. */
export interface BashToolOptions extends WorkspaceToolsOptions {
  /** Realpath of the workspace: every command runs there. */
  root: string;
  /**
   * Baton's git directory of the workspace, shown read-only inside the sandbox (`git status`,
   * `git diff`, `git log` work; nothing of it can change). Default: none.
   */
  gitDir?: string | undefined;
  /**
   * The session's sandbox, shared with its MCP servers (one loopback); its owner disposes it.
   * Default: the tool opens its own and disposes it.
   */
  sessionSandbox?: SessionSandbox;
}

/**
 * The command without its trailing `&` when it is one to run in the background (`npm run dev &`,
 * `node server.js &`), else `null`. `&&`, `\&` and `&` anywhere else are ordinary.
 */
function backgroundCommand(command: string): string | null {
  const trimmed = command.trimEnd();
  if (!trimmed.endsWith('&') || /(&&|\\&)$/.test(trimmed)) return null;
  const rest = trimmed.slice(0, -1).trimEnd();
  return rest === '' ? null : rest;
}

/** The outcome of a command that was stopped, with the limit that stopped it where one did. */
function stoppedOutcome(result: CommandResult, timeoutMs: number, text: string): ToolOutcome {
  const so = text ? `\nOutput so far:\n${text}` : '';
  if (result.stopped === 'workspace-full') {
    const limit = result.workspaceFull ?? 'The workspace is over its limits.';
    return { content: `The command was stopped: ${limit}${so}`, isError: true, limit };
  }
  if (result.stopped === 'timeout') {
    const after = timeoutMs < 1000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 1000)} s`;
    const limit = `The command timed out after ${after} (sandbox limit commandTimeoutMs) and was stopped.`;
    return { content: `${limit}${so}`, isError: true, limit };
  }
  return { content: `The command was stopped because the session is ending.${so}`, isError: true };
}

/**
 * The `bash` tool (`bash_20250124`). Each call runs `bash -c` in the workspace root inside the
 * session's OS sandbox (`@baton/workspace`: own namespaces, read-only system, the workspace and a
 * private tmp, no network unless allowed, clean environment, limits), after the command policy,
 * with capped output. Every process of a command ends with it, except a command ending in `&`,
 * which runs in the background until the session ends; `dispose` ends the session's. There
 * is no persistent shell: `restart` is accepted and does nothing.
 */
export function createBashTool(options: BashToolOptions): SessionTool {
  const maxOutput = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  const shared = options.sessionSandbox;
  const sandbox =
    shared ??
    new SessionSandbox({ root: options.root, setup: options.sandbox, gitDir: options.gitDir });
  const setup = sandbox.setup;
  const timeoutMs = (setup.policy ?? DEFAULT_SANDBOX_POLICY).limits.commandTimeoutMs;
  let backgrounds = 0;

  /**
   * Starts `command` as a process of the session that outlives this call (a dev server): its
   * output goes to `$TMPDIR/background-N.log`, and it ends with the session.
   */
  function startInBackground(commands: CommandSandbox, command: string): ToolOutcome {
    backgrounds += 1;
    const log = `background-${backgrounds}.log`;
    try {
      const started = commands.startProcess(
        ['/bin/bash', '-c', `exec >>"\${TMPDIR:-/tmp}/${log}" 2>&1 </dev/null\n${command}`],
        { env: options.env },
      );
      started.stdout.resume();
      started.stderr.resume();
    } catch {
      return { content: 'The command could not start in the background.', isError: true };
    }
    const tmp = setup.mode === 'off' ? '$TMPDIR' : '/tmp';
    return {
      content: `Started in the background (job ${backgrounds}); its output goes to ${tmp}/${log}. It keeps running, on this session's loopback, until the session ends; later commands cannot see or signal it.`,
      isError: false,
    };
  }

  async function run(command: string, signal?: AbortSignal): Promise<ToolOutcome> {
    const refusal = checkCommand(command, options.root, options.commands, {
      sandboxed: setup.mode === 'bubblewrap',
    });
    if (refusal !== null) return { content: refusal, isError: true };
    if (signal?.aborted) return { content: 'Not run: the session is ending.', isError: true };
    let commands: CommandSandbox;
    try {
      commands = await sandbox.open();
    } catch {
      return {
        content: 'Not run: commands cannot be sandboxed on this worker. Tell the operator.',
        isError: true,
      };
    }
    const background = backgroundCommand(command);
    if (background !== null) return startInBackground(commands, background);
    const output = new CappedOutput(maxOutput);
    const result = await commands.run(command, {
      env: options.env,
      signal,
      onOutput: (chunk) => output.push(chunk),
    });
    const text = output.text();
    if (result.startError !== undefined) {
      return { content: `The command could not start: ${result.startError}`, isError: true };
    }
    if (result.stopped !== undefined) return stoppedOutcome(result, timeoutMs, text);
    const status =
      result.exitCode === 0 ? '' : `\n[exit code ${result.exitCode ?? result.signal ?? 'unknown'}]`;
    const gitNote = readOnlyGitNote(text);
    const content =
      (text === '' ? '(no output)' : text) + status + (gitNote === null ? '' : `\n${gitNote}`);
    // Over the workspace's limits the command itself finished; what it left must be deleted.
    if (result.workspaceFull !== undefined) {
      return {
        content: `${content}\n${result.workspaceFull}`,
        isError: true,
        limit: result.workspaceFull,
      };
    }
    return { content, isError: false };
  }

  return {
    name: 'bash',
    definition: { type: 'bash_20250124', name: 'bash' },
    lane: 'workspace',
    // The command's own timeout stops it first; the toolbox's limit is the backstop.
    timeLimitMs: timeoutMs + 30_000,
    async execute(input, signal) {
      if (
        typeof input === 'object' &&
        input !== null &&
        (input as Record<string, unknown>).restart === true
      ) {
        return { content: 'Bash tool has been restarted.', isError: false };
      }
      const command = stringField(input, 'command');
      if (command === undefined || command.trim() === '') {
        return {
          content: 'Error: the bash tool needs a "command" string (or "restart": true).',
          isError: true,
        };
      }
      return run(command, signal);
    },
    summarize(input) {
      if (
        typeof input === 'object' &&
        input !== null &&
        (input as Record<string, unknown>).restart === true
      )
        return 'restart';
      return shorten(stringField(input, 'command') ?? '(no command)');
    },
    async dispose() {
      if (shared === undefined) await sandbox.dispose();
    },
  };
}
