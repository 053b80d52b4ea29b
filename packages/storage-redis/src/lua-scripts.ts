import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { RedisClient } from './redis-connection.js';

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

/** One loaded script, for sending it by hand (inside a MULTI, say) with EVALSHA or EVAL. */
export interface LuaScript {
  readonly name: string;
  /** The source with its includes pasted in. */
  readonly lua: string;
  /** SHA-1 of `lua`, as EVALSHA names it. */
  readonly sha: string;
  readonly numberOfKeys: number;
}

/** Registers the scripts on a client; `script(name)` gives one of them for sending by hand. */
export interface LuaScripts<Commands> {
  (client: RedisClient): RedisClient & Commands;
  script(name: keyof Commands & string): LuaScript;
}

/**
 * Loads Lua scripts from files and returns a function that registers them on an ioredis client
 * with `defineCommand`, which sends EVALSHA and falls back to EVAL when the server does not know
 * the script yet (after a restart or failover). Each package that owns scripts calls this once.
 *
 * The number of keys comes from the file name (`write-4.lua`: four keys). A line
 * `--- @include "name"` is replaced by `includes/<name>.lua`. Files are read on first use.
 */
export function createLuaScripts<Commands extends object>(
  options: LuaScriptsOptions<Commands>,
): LuaScripts<Commands> {
  let loaded: Map<string, LuaScript> | undefined;
  const load = (): Map<string, LuaScript> => {
    loaded ??= new Map(
      Object.entries<string>(options.files).map(([name, file]) => {
        const lua = loadScript(options.directory, file);
        const sha = createHash('sha1').update(lua).digest('hex');
        const numberOfKeys = Number(/-(\d+)\.lua$/u.exec(file)?.[1]);
        return [name, { name, lua, sha, numberOfKeys }];
      }),
    );
    return loaded;
  };
  const defined = new WeakSet<object>();
  const register = (client: RedisClient): RedisClient & Commands => {
    if (!defined.has(client)) {
      for (const script of load().values()) {
        client.defineCommand(script.name, { lua: script.lua, numberOfKeys: script.numberOfKeys });
      }
      defined.add(client);
    }
    return client as RedisClient & Commands;
  };
  return Object.assign(register, {
    script(name: keyof Commands & string): LuaScript {
      const script = load().get(name);
      if (script === undefined) {
        throw new TypeError(`No Lua script named ${name}.`);
      }
      return script;
    },
  });
}

const INCLUDE = /^--- @include "([a-z-]+)"$/gmu;

function loadScript(directory: URL, file: string): string {
  const source = readFileSync(new URL(file, directory), 'utf8');
  return source.replace(INCLUDE, (_line, name: string) =>
    readFileSync(new URL(`includes/${name}.lua`, directory), 'utf8'),
  );
}
