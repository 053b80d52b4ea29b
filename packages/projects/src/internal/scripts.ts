import { readFileSync } from 'node:fs';
import type { RedisClient } from '../redis-connection.js';

/**
 * Loads the Lua scripts in `src/commands/` (copied to `dist/commands/` by the build) and
 * registers them on an ioredis client with `defineCommand`, which sends EVALSHA and falls back
 * to EVAL when the server does not know the script yet (after a restart or failover).
 *
 * File names follow `<name>-<numberOfKeys>.lua`. A line `--- @include "name"` is replaced by
 * `commands/includes/<name>.lua`.
 */

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
    ...args: (string | number)[]
  ): Reply;
  batonTouchProject(changes: string, version: string, projectId: string): Reply;
  batonIndexProject(project: string, search: string, ...args: (string | number)[]): Reply;
  batonUnindexProject(
    project: string,
    changes: string,
    version: string,
    ...args: (string | number)[]
  ): Reply;
  batonPageProjects(index: string, search: string, ...args: (string | number)[]): Reply;
  batonRenewLease(lease: string, project: string, ...args: (string | number)[]): Reply;
  batonReleaseLease(lease: string, ...args: (string | number)[]): Reply;
  batonTakeToken(bucket: string, ...args: (string | number)[]): Reply;
}

const COMMANDS_DIRECTORY = new URL('../commands/', import.meta.url);

const SCRIPT_FILES: Record<keyof ScriptCommands, string> = {
  batonCreateProject: 'create-project-5.lua',
  batonTransition: 'transition-4.lua',
  batonTouchProject: 'touch-project-2.lua',
  batonIndexProject: 'index-project-2.lua',
  batonUnindexProject: 'unindex-project-3.lua',
  batonPageProjects: 'page-projects-2.lua',
  batonRenewLease: 'renew-lease-2.lua',
  batonReleaseLease: 'release-lease-1.lua',
  batonTakeToken: 'take-token-1.lua',
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
