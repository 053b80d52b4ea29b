/** The memory store's scripts in `src/commands/`; `createLuaScripts` says how they load. */
import { createLuaScripts } from '../lua-scripts.js';

type Reply = Promise<unknown[]>;

/** The scripts, as methods `defineCommand` adds to a client (names prefixed to avoid clashes). */
export interface ScriptCommands {
  batonMemoryRead(accessTimes: string, ...args: string[]): Reply;
  /** Sent by hand in a MULTI after staging the content (see write-4.lua), not called directly. */
  batonMemoryWrite(
    meta: string,
    accessTimes: string,
    feed: string,
    stage: string,
    ...args: string[]
  ): Reply;
  batonMemoryList(meta: string, ...args: string[]): Reply;
  batonMemoryDelete(meta: string, accessTimes: string, feed: string, ...args: string[]): Reply;
  batonMemoryRename(meta: string, accessTimes: string, feed: string, ...args: string[]): Reply;
  batonMemorySweep(meta: string, accessTimes: string, feed: string, ...args: string[]): Reply;
  batonMemoryFence(meta: string, token: string): Reply;
  batonMemoryMoveBody(file: string, body: string): Promise<number>;
}

/** Registers the scripts on `client` (once per client) and returns it typed with them. */
export const defineScripts = createLuaScripts<ScriptCommands>({
  directory: new URL('../commands/', import.meta.url),
  files: {
    batonMemoryRead: 'read-1.lua',
    batonMemoryWrite: 'write-4.lua',
    batonMemoryList: 'list-1.lua',
    batonMemoryDelete: 'delete-3.lua',
    batonMemoryRename: 'rename-3.lua',
    batonMemorySweep: 'sweep-3.lua',
    batonMemoryFence: 'fence-1.lua',
    batonMemoryMoveBody: 'move-body-2.lua',
  },
});
