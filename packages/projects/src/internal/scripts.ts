/** The project domain's scripts in `src/commands/`; `createLuaScripts` says how they load. */
import { createLuaScripts } from '@baton/storage-redis';

type Reply = Promise<unknown>;

/** The scripts, as methods `defineCommand` adds to a client (names prefixed to avoid clashes). */
export interface ScriptCommands {
  batonCreateProject(
    project: string,
    index: string,
    transitions: string,
    changes: string,
    version: string,
    ...args: (string | number)[]
  ): Reply;
  batonTransition(
    project: string,
    transitions: string,
    changes: string,
    version: string,
    lease: string,
    ...args: (string | number)[]
  ): Reply;
  batonFencedBatch(lease: string, token: string, writes: string): Reply;
  batonTouchProject(changes: string, version: string, projectId: string): Reply;
  batonIndexProject(project: string, search: string, ...args: (string | number)[]): Reply;
  batonUnindexProject(
    project: string,
    changes: string,
    version: string,
    ...args: (string | number)[]
  ): Reply;
  batonPageProjects(index: string, search: string, ...args: (string | number)[]): Reply;
  batonAcquireLease(lease: string, fenceCounter: string, ttlMs: number): Reply;
  batonRenewLease(lease: string, project: string, ...args: (string | number)[]): Reply;
  batonReleaseLease(lease: string, ...args: (string | number)[]): Reply;
  batonTakeToken(bucket: string, ...args: (string | number)[]): Reply;
  batonExtendLock(lock: string, ...args: (string | number)[]): Reply;
  batonReplaceField(hash: string, ...args: (string | number)[]): Reply;
}

/** Registers the scripts on `client` (once per client) and returns it typed with them. */
export const defineScripts = createLuaScripts<ScriptCommands>({
  directory: new URL('../commands/', import.meta.url),
  files: {
    batonCreateProject: 'create-project-5.lua',
    batonTransition: 'transition-5.lua',
    batonFencedBatch: 'fenced-batch-1.lua',
    batonTouchProject: 'touch-project-2.lua',
    batonIndexProject: 'index-project-2.lua',
    batonUnindexProject: 'unindex-project-3.lua',
    batonPageProjects: 'page-projects-2.lua',
    batonAcquireLease: 'acquire-lease-2.lua',
    batonRenewLease: 'renew-lease-2.lua',
    batonReleaseLease: 'release-lease-1.lua',
    batonTakeToken: 'take-token-1.lua',
    batonExtendLock: 'extend-lock-1.lua',
    batonReplaceField: 'replace-field-1.lua',
  },
});
