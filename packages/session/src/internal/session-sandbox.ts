import {
  type CommandSandbox,
  DEFAULT_SANDBOX_SETUP,
  type SandboxSetup,
  openCommandSandbox,
} from '@baton/workspace';

/**
 * One session's sandbox, opened at its first use and shared by the bash tool and the session's
 * stdio MCP servers: one network namespace, so one loopback, for everything the session runs (an
 * app started from bash is reachable by the browser server at 127.0.0.1). Its owner disposes it.
 */
export class SessionSandbox {
  readonly setup: SandboxSetup;
  readonly #root: string;
  readonly #gitDir: string | undefined;
  #opened: Promise<CommandSandbox> | undefined;

  constructor(options: {
    root: string;
    setup?: SandboxSetup | undefined;
    gitDir?: string | undefined;
  }) {
    this.#root = options.root;
    this.setup = options.setup ?? DEFAULT_SANDBOX_SETUP;
    this.#gitDir = options.gitDir;
  }

  /** The open sandbox; a failed open is tried again at the next call. */
  open(): Promise<CommandSandbox> {
    const opened = (this.#opened ??= openCommandSandbox({
      workspace: this.#root,
      setup: this.setup,
      gitDir: this.#gitDir,
    }));
    opened.catch(() => {
      if (this.#opened === opened) this.#opened = undefined;
    });
    return opened;
  }

  /** Ends every process of the session and closes the sandbox. Idempotent. */
  async dispose(): Promise<void> {
    const opened = this.#opened;
    this.#opened = undefined;
    await (await opened?.catch(() => undefined))?.dispose();
  }
}
