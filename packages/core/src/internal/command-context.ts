/**
 * What every command module receives: the store, the limits, and the helpers that apply the path
 * policy, the write hooks and the quotas the same way for every command.
 */
import { MemoryToolError } from '../memory-tool-error.js';
import type {
  MemoryChange,
  MemoryCommandName,
  MemoryQuotaEnforcement,
  MemoryToolHooks,
  MemoryToolLimits,
  MemoryWrite,
} from '../memory-tool-options.js';
import { parseMemoryPath, toVirtualPath } from '../path-policy.js';
import type { MemoryStore, MutationContext, StoreUsage } from '../store.js';
import { byteLength } from './text.js';

/** A path the policy accepted, in both spellings. */
interface ResolvedPath {
  /** The `StorePath` handed to the store (`''` for the root). */
  storePath: string;
  /** The canonical virtual path used in every message (`/memories/...`). */
  virtualPath: string;
}

/** Shared services for the command modules. */
export interface CommandContext {
  readonly store: MemoryStore;
  readonly limits: Readonly<MemoryToolLimits>;
  /** Applies the path policy; throws `MemoryToolError` (`invalid_path`). */
  resolvePath(path: string): ResolvedPath;
  /** The `MutationContext` for a store call made by `command`. */
  mutation(command: MemoryCommandName): MutationContext;
  /**
   * Runs `beforeWrite` and checks the per-file size. Synchronous: it may run inside a store's
   * retry loop. Returns the content to store.
   */
  prepareWrite(write: MemoryWrite): string;
  /**
   * Whether a write of `content` could be refused by the handler itself (a `beforeWrite` hook,
   * the per-file size, or store-wide limits the handler enforces) before it reaches the store.
   */
  mayRefuseBeforeStore(content: string): boolean;
  /**
   * Store usage, fetched only when the handler enforces the store-wide limits and one of them is
   * finite; `undefined` otherwise (then `assertQuota` checks nothing).
   */
  usageForQuota(): Promise<StoreUsage | undefined>;
  /** Throws `limit` if a mutation adding `deltaBytes` and `deltaFiles` would break a store-wide limit. */
  assertQuota(
    usage: StoreUsage | undefined,
    path: string,
    deltaBytes: number,
    deltaFiles: number,
  ): void;
  /** Reports a completed mutation to `afterChange`, never failing the command. */
  changed(change: Omit<MemoryChange, 'at' | 'session'>): Promise<void>;
}

/** Builds the context shared by all commands of one memory tool. */
export function createCommandContext(options: {
  store: MemoryStore;
  limits: Readonly<MemoryToolLimits>;
  hooks: MemoryToolHooks;
  session: string | undefined;
  now: () => number;
  quotaEnforcement: MemoryQuotaEnforcement;
}): CommandContext {
  const { store, limits, hooks, session, now, quotaEnforcement } = options;

  return {
    store,
    limits,

    resolvePath(path) {
      const storePath = parseMemoryPath(path, {
        maxPathLength: limits.maxPathLength,
        maxNameLength: limits.maxNameLength,
      });
      return { storePath, virtualPath: toVirtualPath(storePath) };
    },

    mutation(command) {
      return session === undefined ? { command } : { command, session };
    },

    prepareWrite(write) {
      let content = write.after;
      if (hooks.beforeWrite !== undefined) {
        let replaced: unknown;
        try {
          replaced = hooks.beforeWrite(write);
        } catch (error) {
          if (error instanceof MemoryToolError) throw error;
          hooks.onUnexpectedError?.(error, { command: write.command, source: 'command' });
          throw new MemoryToolError(
            `Error: The write to ${write.path} was refused by a check that failed unexpectedly. Nothing was changed.`,
            { code: 'refused', cause: error },
          );
        }
        if (typeof replaced === 'string') content = replaced;
      }
      const bytes = byteLength(content);
      if (bytes > limits.maxFileBytes) {
        throw new MemoryToolError(
          `Error: File ${write.path} would be ${bytes} bytes, over the limit of ${limits.maxFileBytes} bytes per file. Nothing was changed.`,
          { code: 'limit' },
        );
      }
      return content;
    },

    mayRefuseBeforeStore(content) {
      return (
        hooks.beforeWrite !== undefined ||
        byteLength(content) > limits.maxFileBytes ||
        (quotaEnforcement === 'handler' &&
          (Number.isFinite(limits.maxTotalBytes) || Number.isFinite(limits.maxFiles)))
      );
    },

    async usageForQuota() {
      // The store enforces the store-wide limits atomically; its refusal arrives as quota_exceeded.
      if (quotaEnforcement === 'store') return undefined;
      // Infinity (or a huge number) disables a limit; skip the store round trip then.
      if (!Number.isFinite(limits.maxTotalBytes) && !Number.isFinite(limits.maxFiles)) {
        return undefined;
      }
      return store.usage();
    },

    assertQuota(usage, path, deltaBytes, deltaFiles) {
      if (usage === undefined) return;
      const files = usage.files + deltaFiles;
      if (deltaFiles > 0 && files > limits.maxFiles) {
        throw new MemoryToolError(
          `Error: Cannot write ${path}: the memory directory would hold ${files} files, over the limit of ${limits.maxFiles} files. Nothing was changed; delete files you no longer need.`,
          { code: 'limit' },
        );
      }
      const bytes = usage.bytes + deltaBytes;
      if (deltaBytes > 0 && bytes > limits.maxTotalBytes) {
        throw new MemoryToolError(
          `Error: Cannot write ${path}: the memory directory would hold ${bytes} bytes, over the limit of ${limits.maxTotalBytes} bytes. Nothing was changed; delete files you no longer need.`,
          { code: 'limit' },
        );
      }
    },

    async changed(change) {
      if (hooks.afterChange === undefined) return;
      const full: MemoryChange = { ...change, at: now() };
      if (session !== undefined) full.session = session;
      try {
        await hooks.afterChange(full);
      } catch (error) {
        try {
          hooks.onHookError?.(error, { command: change.command, source: 'afterChange' });
        } catch {
          // A failing error reporter must not turn a completed change into an error result.
        }
      }
    },
  };
}
