import { readFileSync } from 'node:fs';
import type { Cluster, Redis } from 'ioredis';

/**
 * Loads the Lua scripts in `src/commands/` (copied to `dist/commands/` by the build) and
 * registers them on an ioredis client with `defineCommand`, which sends EVALSHA and falls back
 * to EVAL when the server does not know the script yet (after a restart or failover).
 *
 * File names follow `<name>-<numberOfKeys>.lua`. A line `--- @include "lib"` is replaced by
 * `commands/includes/lib.lua`.
 */

/** Any client the store can run scripts on. */
export type RedisClient = Redis | Cluster;

type Reply = Promise<unknown[]>;

/** The scripts, as methods `defineCommand` adds to a client (names prefixed to avoid clashes). */
export interface ScriptCommands {
  batonMemoryRead(accessTimes: string, ...args: string[]): Reply;
  batonMemoryWrite(meta: string, accessTimes: string, feed: string, ...args: string[]): Reply;
  batonMemoryList(meta: string, ...args: string[]): Reply;
  batonMemoryDelete(meta: string, accessTimes: string, feed: string, ...args: string[]): Reply;
  batonMemoryRename(meta: string, accessTimes: string, feed: string, ...args: string[]): Reply;
  batonMemorySweep(meta: string, accessTimes: string, feed: string, ...args: string[]): Reply;
}

const COMMANDS_DIRECTORY = new URL('../commands/', import.meta.url);

const SCRIPT_FILES: Record<keyof ScriptCommands, string> = {
  batonMemoryRead: 'read-1.lua',
  batonMemoryWrite: 'write-3.lua',
  batonMemoryList: 'list-1.lua',
  batonMemoryDelete: 'delete-3.lua',
  batonMemoryRename: 'rename-3.lua',
  batonMemorySweep: 'sweep-3.lua',
};

const INCLUDE = /^--- @include "([a-z-]+)"$/gmu;

function loadScript(file: string): string {
  const source = readFileSync(new URL(file, COMMANDS_DIRECTORY), 'utf8');
  return source.replace(INCLUDE, (_line, name: string) =>
    readFileSync(new URL(`includes/${name}.lua`, COMMANDS_DIRECTORY), 'utf8'),
  );
}

let loaded: Array<{ name: string; lua: string; numberOfKeys: number }> | undefined;

function scripts(): Array<{ name: string; lua: string; numberOfKeys: number }> {
  loaded ??= Object.entries(SCRIPT_FILES).map(([name, file]) => ({
    name,
    lua: loadScript(file),
    numberOfKeys: Number(/-(\d+)\.lua$/u.exec(file)?.[1]),
  }));
  return loaded;
}

const defined = new WeakSet<object>();

/** Registers the scripts on `client` (once per client) and returns it typed with them. */
export function defineScripts(client: RedisClient): RedisClient & ScriptCommands {
  if (!defined.has(client)) {
    for (const script of scripts()) {
      client.defineCommand(script.name, { lua: script.lua, numberOfKeys: script.numberOfKeys });
    }
    defined.add(client);
  }
  return client as RedisClient & ScriptCommands;
}
