import { readFileSync } from 'node:fs';
import type { Cluster, Redis } from 'ioredis';

/** Any client scripts can be defined on. */
export type RedisClient = Redis | Cluster;

/** Options of `createLuaScripts`. */
export interface LuaScriptsOptions<Commands> {
  /**
   * The folder holding the scripts and their `includes/` (a package's `src/commands/`, copied to
   * `dist/commands/` by its build), as a URL ending in `/`.
   */
  directory: URL;
  /** Command name (as added to the client) -> file name `<name>-<numberOfKeys>.lua`. */
  files: Record<keyof Commands & string, string>;
}

/**
 * Loads Lua scripts from files and returns a function that registers them on an ioredis client
 * with `defineCommand`, which sends EVALSHA and falls back to EVAL when the server does not know
 * the script yet (after a restart or failover). Each package that owns scripts calls this once.
 *
 * The number of keys comes from the file name (`write-3.lua`: three keys). A line
 * `--- @include "name"` is replaced by `includes/<name>.lua`. Files are read on first use.
 */
export function createLuaScripts<Commands extends object>(
  options: LuaScriptsOptions<Commands>,
): (client: RedisClient) => RedisClient & Commands {
  let loaded: Array<{ name: string; lua: string; numberOfKeys: number }> | undefined;
  const defined = new WeakSet<object>();
  return (client) => {
    if (!defined.has(client)) {
      loaded ??= Object.entries<string>(options.files).map(([name, file]) => ({
        name,
        lua: loadScript(options.directory, file),
        numberOfKeys: Number(/-(\d+)\.lua$/u.exec(file)?.[1]),
      }));
      for (const script of loaded) {
        client.defineCommand(script.name, { lua: script.lua, numberOfKeys: script.numberOfKeys });
      }
      defined.add(client);
    }
    return client as RedisClient & Commands;
  };
}

const INCLUDE = /^--- @include "([a-z-]+)"$/gmu;

function loadScript(directory: URL, file: string): string {
  const source = readFileSync(new URL(file, directory), 'utf8');
  return source.replace(INCLUDE, (_line, name: string) =>
    readFileSync(new URL(`includes/${name}.lua`, directory), 'utf8'),
  );
}
