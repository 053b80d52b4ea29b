/** The memory store's scripts in `src/commands/`; `createLuaScripts` says how they load. */
import { createLuaScripts } from '../lua-scripts.js';

type Reply = Promise<unknown[]>;

/** The scripts (arguments keys first, and reply), called through `scripts.call` and `scripts.queue`. */
export interface ScriptCommands {
  read(accessTimes: string, ...args: string[]): Reply;
  /** Sent by hand in a MULTI after staging the content (see write-4.lua), not called directly. */
  write(meta: string, accessTimes: string, feed: string, stage: string, ...args: string[]): Reply;
  list(meta: string, ...args: string[]): Reply;
  delete(meta: string, accessTimes: string, feed: string, ...args: string[]): Reply;
  rename(meta: string, accessTimes: string, feed: string, ...args: string[]): Reply;
  sweep(meta: string, accessTimes: string, feed: string, ...args: string[]): Reply;
  fence(meta: string, token: string): Reply;
  moveBody(file: string, body: string): Promise<number>;
}

/** The scripts, each registered on a client as `<name>:<version>` (see `createLuaScripts`). */
export const scripts = createLuaScripts<ScriptCommands>({
  directory: new URL('../commands/', import.meta.url),
  files: {
    read: 'read-1.lua',
    write: 'write-4.lua',
    list: 'list-1.lua',
    delete: 'delete-3.lua',
    rename: 'rename-3.lua',
    sweep: 'sweep-3.lua',
    fence: 'fence-1.lua',
    moveBody: 'move-body-2.lua',
  },
});
