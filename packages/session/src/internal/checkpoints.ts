import type { BetaToolUseBlock } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { Checkpoint, CheckpointRequest } from '@baton/workspace';
import type { SessionCheckpointReason, SessionCheckpoints } from '../types.js';
import type { EventBody } from './events.js';

/** Memory commands that change memory (a `view` does not). */
const MEMORY_WRITES = new Set(['create', 'str_replace', 'insert', 'delete', 'rename']);

export interface CheckpointerOptions {
  checkpoints: SessionCheckpoints;
  /** `baton: session 3 (resume) of todo` */
  subject: string;
  /** Trailers every checkpoint commit carries. */
  trailers: ReadonlyArray<readonly [string, string]>;
  emit: (body: EventBody) => Promise<void>;
  /** Called once when the remote refuses a push as not a fast-forward. */
  onRejected: (message: string) => void;
}

const HOOKS_RANK: Record<Checkpoint['hooks'], number> = {
  none: 0,
  skipped: 1,
  passed: 2,
  refused: 3,
};

/**
 * When a session saves its workspace: after turns whose tools touched the workspace (at most one
 * checkpoint per interval), before a memory write that follows workspace changes (memory never
 * describes work the remote does not have), and once at the end.
 */
export class Checkpointer {
  /** Every commit the session's checkpoints made, oldest first. */
  readonly commits: string[] = [];
  last: Checkpoint | undefined;
  /**
   * What the hooks did to this session's commits: `refused` once any refused, else `passed`,
   * `skipped` or `none` (no commit, or no hooks). The end checkpoint alone often commits nothing.
   */
  hooks: Checkpoint['hooks'] = 'none';
  /** Why the latest checkpoint could not be committed; `undefined` once one succeeds again. */
  failure: string | undefined;
  /**
   * How many checkpoints of the session did not reach the remote: not committed, or committed
   * but not pushed (each retried at the next one).
   */
  failures = 0;
  readonly #options: CheckpointerOptions;
  readonly #intervalMs: number;
  #dirty = false;
  /** The session starts from a checkpoint: the first interval counts from its start. */
  #lastAt = Date.now();
  #queue: Promise<unknown> = Promise.resolve();
  #notes: string[] = [];
  #rejected = false;
  /** The model was told pushes fail; told again only after one landed. */
  #toldUnpushed = false;
  /** Special files the model was already told about (they show up in every checkpoint). */
  readonly #toldSpecial = new Set<string>();

  constructor(options: CheckpointerOptions) {
    this.#options = options;
    this.#intervalMs = options.checkpoints.intervalMs ?? 5_000;
  }

  /** Before a tool call runs: a memory write waits for the workspace changes before it. */
  async beforeToolCall(block: BetaToolUseBlock): Promise<void> {
    if (!this.#dirty || block.name !== 'memory') return;
    const command = (block.input as { command?: unknown } | null)?.command;
    if (typeof command === 'string' && MEMORY_WRITES.has(command)) await this.save('memory');
  }

  /** After a turn's tool calls ran: a workspace tool may have changed files. */
  async afterToolCalls(blocks: readonly BetaToolUseBlock[]): Promise<void> {
    if (blocks.some((block) => block.name !== 'memory')) this.#dirty = true;
    if (this.#dirty && Date.now() - this.#lastAt >= this.#intervalMs) await this.save('turn');
  }

  /**
   * What the model should hear since the last time (refused hooks, failed checkpoints), then
   * forgotten; the session adds it after the tool results of the next user turn.
   */
  takeNotes(): string[] {
    const notes = this.#notes;
    this.#notes = [];
    return notes;
  }

  /**
   * One checkpoint, after any running one; `end` retries the push until it lands or the
   * attempts run out. Never throws: a failure is reported as an event and `undefined`.
   */
  save(
    reason: SessionCheckpointReason,
    extra: { subject?: string; trailers?: CheckpointRequest['trailers'] } = {},
  ): Promise<Checkpoint | undefined> {
    const run = this.#queue.then(() => this.#save(reason, extra));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #save(
    reason: SessionCheckpointReason,
    extra: { subject?: string; trailers?: CheckpointRequest['trailers'] },
  ): Promise<Checkpoint | undefined> {
    this.#dirty = false;
    this.#lastAt = Date.now();
    let checkpoint: Checkpoint;
    try {
      checkpoint = await this.#options.checkpoints.target.checkpoint({
        subject: `${this.#options.subject}: ${extra.subject ?? 'checkpoint'}`,
        trailers: [...this.#options.trailers, ...(extra.trailers ?? [])],
        final: reason === 'end',
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.failure = message;
      this.failures += 1;
      // Retried at the next opportunity (the next turn's tools, a memory write, the end).
      this.#dirty = true;
      this.#notes.push(
        `The checkpoint of your workspace failed, so your latest changes are not saved on the project branch yet: ${message.replace(/\.+$/, '')}. ` +
          'Baton retries at the next checkpoint; if the cause is in the workspace (a file git cannot store), fix or remove it.',
      );
      await this.#options.emit({
        type: 'checkpoint',
        reason,
        commit: null,
        head: null,
        pushed: false,
        hooks: 'none',
        skipped: [],
        error: message,
      });
      return undefined;
    }
    this.failure = undefined;
    this.last = checkpoint;
    if (checkpoint.commit !== null) {
      this.commits.push(checkpoint.commit);
      if (HOOKS_RANK[checkpoint.hooks] > HOOKS_RANK[this.hooks]) this.hooks = checkpoint.hooks;
    }
    if (checkpoint.hooks === 'refused') {
      this.#notes.push(
        `The checkpoint commit of your workspace changes was refused by the repository's commit hooks. ` +
          `Your work is saved anyway (committed without hooks, marked in the commit). Fix what the hook reports:\n${checkpoint.hookOutput ?? ''}`,
      );
    }
    if (checkpoint.tooLarge !== undefined && checkpoint.tooLarge.length > 0) {
      this.#notes.push(
        `These files were left out of the checkpoint commit because they are larger than the per-file limit: ${describeLarge(checkpoint.tooLarge)}. ` +
          'They stay in the workspace but are not saved or pushed; keep large generated files out of the workspace, or list them in .gitignore.',
      );
    }
    const newSpecial = (checkpoint.special ?? []).filter(
      (file) => !this.#toldSpecial.has(file.path),
    );
    if (newSpecial.length > 0) {
      for (const file of newSpecial) this.#toldSpecial.add(file.path);
      this.#notes.push(
        `These files were left out of the checkpoint commit because git cannot store them (not regular files, or names git refuses): ${describeSpecial(newSpecial)}. ` +
          'They stay in the workspace but are not saved or pushed; remove them when they are no longer needed.',
      );
    }
    if (checkpoint.pushed) {
      this.#toldUnpushed = false;
    } else if (checkpoint.pushError !== undefined) {
      this.failures += 1;
      if (checkpoint.pushError.code === 'push_failed' && !this.#toldUnpushed) {
        this.#toldUnpushed = true;
        // The remote's error names host paths and is not the model's to fix: the user is told.
        this.#notes.push(
          'Your latest changes are committed in the workspace but could not be pushed to the project branch. ' +
            'Baton retries at the next checkpoint; nothing is lost, so go on working. If the last checkpoint of the session cannot be pushed either, the project pauses until the user fixes the remote.',
        );
      }
    }
    if (checkpoint.pushError?.code === 'push_rejected' && !this.#rejected) {
      this.#rejected = true;
      this.#options.onRejected(checkpoint.pushError.message);
    }
    if (
      checkpoint.commit !== null ||
      reason === 'end' ||
      checkpoint.pushError !== undefined ||
      checkpoint.replacedStale !== undefined
    ) {
      await this.#options.emit({
        type: 'checkpoint',
        reason,
        commit: checkpoint.commit,
        head: checkpoint.head,
        pushed: checkpoint.pushed,
        hooks: checkpoint.hooks,
        skipped: checkpoint.skipped,
        ...(checkpoint.tooLarge === undefined || checkpoint.tooLarge.length === 0
          ? {}
          : { tooLarge: checkpoint.tooLarge }),
        ...(checkpoint.special === undefined || checkpoint.special.length === 0
          ? {}
          : { special: checkpoint.special }),
        error: checkpoint.pushError?.message,
        replacedStale: checkpoint.replacedStale,
      });
    }
    return checkpoint;
  }
}

/** `big.bin (300 MB), out.log (60 MB)`, at most ten names. */
function describeLarge(files: ReadonlyArray<{ path: string; bytes: number }>): string {
  const named = files
    .slice(0, 10)
    .map((file) => `${file.path} (${Math.round(file.bytes / 1024 / 1024)} MB)`)
    .join(', ');
  return files.length > 10 ? `${named} and ${files.length - 10} more` : named;
}

/** `run/app.sock (socket), in (fifo)`, at most ten names. */
function describeSpecial(files: ReadonlyArray<{ path: string; kind: string }>): string {
  const named = files
    .slice(0, 10)
    .map((file) => `${file.path} (${file.kind})`)
    .join(', ');
  return files.length > 10 ? `${named} and ${files.length - 10} more` : named;
}
