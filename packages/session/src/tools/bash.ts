import { spawn } from 'node:child_process';
import { checkCommand } from '../internal/command-policy.js';
import {
  shorten,
  stringField,
  type SessionTool,
  type ToolOutcome,
  type WorkspaceToolsOptions,
} from './types.js';

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_OUTPUT_CHARS = 30_000;

/** Keeps the head and the tail of a long output within a character budget. */
class CappedOutput {
  private head = '';
  private tail = '';
  private dropped = 0;
  constructor(private readonly max: number) {}

  push(chunk: string): void {
    const half = Math.floor(this.max / 2);
    if (this.head.length < half) {
      const room = half - this.head.length;
      this.head += chunk.slice(0, room);
      chunk = chunk.slice(room);
    }
    if (chunk === '') return;
    this.tail += chunk;
    if (this.tail.length > 2 * half) {
      this.dropped += this.tail.length - half;
      this.tail = this.tail.slice(-half);
    }
  }

  text(): string {
    if (this.dropped === 0) return this.head + this.tail;
    const excess = Math.max(0, this.tail.length - Math.floor(this.max / 2));
    const dropped = this.dropped + excess;
    return `${this.head}\n[... ${dropped} characters of output cut ...]\n${this.tail.slice(excess)}`;
  }
}

/** Options of `createBashTool`. */
export interface BashToolOptions extends WorkspaceToolsOptions {
  /** Realpath of the workspace: every command runs there. */
  root: string;
}

/**
 * The `bash` tool (`bash_20250124`). Each call runs `bash -c` in the workspace root with a clean
 * environment (no host secrets), a timeout that kills the whole process group, capped output and
 * the command policy. There is no persistent shell: `restart` is accepted and does nothing.
 */
export function createBashTool(options: BashToolOptions): SessionTool {
  const timeoutMs = options.commandTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxOutput = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: options.root,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    CI: '1',
    GIT_TERMINAL_PROMPT: '0',
    ...options.env,
  };

  async function run(command: string, signal?: AbortSignal): Promise<ToolOutcome> {
    const refusal = checkCommand(command, options.root, options.commands);
    if (refusal !== null) return { content: refusal, isError: true };
    if (signal?.aborted) return { content: 'Not run: the session is ending.', isError: true };
    return new Promise((resolve) => {
      const output = new CappedOutput(maxOutput);
      const child = spawn('bash', ['-c', command], {
        cwd: options.root,
        env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stopped: 'timeout' | 'aborted' | undefined;
      const kill = (why: 'timeout' | 'aborted') => {
        stopped ??= why;
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      };
      const timer = setTimeout(() => kill('timeout'), timeoutMs);
      const onAbort = () => kill('aborted');
      signal?.addEventListener('abort', onAbort, { once: true });
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
      const finish = (outcome: ToolOutcome) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      child.on('error', (error) =>
        finish({ content: `The command could not start: ${error.message}`, isError: true }),
      );
      child.on('close', (code, killedBy) => {
        const text = output.text();
        if (stopped === 'timeout') {
          finish({
            content: `The command timed out after ${Math.round(timeoutMs / 1000)} s and was stopped.${text ? `\nOutput so far:\n${text}` : ''}`,
            isError: true,
          });
        } else if (stopped === 'aborted') {
          finish({
            content: `The command was stopped because the session is ending.${text ? `\nOutput so far:\n${text}` : ''}`,
            isError: true,
          });
        } else {
          const status = code === 0 ? '' : `\n[exit code ${code ?? killedBy ?? 'unknown'}]`;
          finish({ content: (text === '' ? '(no output)' : text) + status, isError: false });
        }
      });
    });
  }

  return {
    name: 'bash',
    definition: { type: 'bash_20250124', name: 'bash' },
    lane: 'workspace',
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
  };
}
