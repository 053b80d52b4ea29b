/** The project domain's scripts in `src/commands/`; `createLuaScripts` says how they load. */
import { createLuaScripts } from '@baton/storage-redis';

type Reply = Promise<unknown>;

/** The scripts (arguments keys first, and reply), called through `scripts.call` and `scripts.queue`. */
export interface ScriptCommands {
  createProject(
    project: string,
    index: string,
    transitions: string,
    changes: string,
    version: string,
    ...args: (string | number)[]
  ): Reply;
  transition(
    project: string,
    transitions: string,
    changes: string,
    version: string,
    lease: string,
    ...args: (string | number)[]
  ): Reply;
  fencedBatch(lease: string, token: string, writes: string): Reply;
  touchProject(changes: string, version: string, projectId: string): Reply;
  indexProject(project: string, search: string, ...args: (string | number)[]): Reply;
  unindexProject(
    project: string,
    changes: string,
    version: string,
    ...args: (string | number)[]
  ): Reply;
  pageProjects(index: string, search: string, ...args: (string | number)[]): Reply;
  acquireLease(lease: string, fenceCounter: string, ttlMs: number): Reply;
  renewLease(lease: string, project: string, ...args: (string | number)[]): Reply;
  releaseLease(lease: string, ...args: (string | number)[]): Reply;
  takeToken(bucket: string, ...args: (string | number)[]): Reply;
  extendLock(lock: string, ...args: (string | number)[]): Reply;
  replaceField(hash: string, ...args: (string | number)[]): Reply;
  replaceListEntry(list: string, index: number, read: string, replacement: string): Reply;
  replaceStream(stream: string, copy: string, lock: string, lastId: string, token: string): Reply;
}

/** The scripts, each registered on a client as `<name>:<version>` (see `createLuaScripts`). */
export const scripts = createLuaScripts<ScriptCommands>({
  directory: new URL('../commands/', import.meta.url),
  files: {
    createProject: 'create-project-5.lua',
    transition: 'transition-5.lua',
    fencedBatch: 'fenced-batch-1.lua',
    touchProject: 'touch-project-2.lua',
    indexProject: 'index-project-2.lua',
    unindexProject: 'unindex-project-3.lua',
    pageProjects: 'page-projects-2.lua',
    acquireLease: 'acquire-lease-2.lua',
    renewLease: 'renew-lease-2.lua',
    releaseLease: 'release-lease-1.lua',
    takeToken: 'take-token-1.lua',
    extendLock: 'extend-lock-1.lua',
    replaceField: 'replace-field-1.lua',
    replaceListEntry: 'replace-list-entry-1.lua',
    replaceStream: 'replace-stream-3.lua',
  },
});
