import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './redis-connection.js';

/** Options of `createLuaScripts`. */
export interface LuaScriptsOptions<Commands> {
  /**
   * The folder holding the scripts and their `includes/` (a package's `src/commands/`, copied to
   * `dist/commands/` by its build), as a URL ending in `/`.
   */
  directory: URL;
  /** Script name -> file name `<name>-<numberOfKeys>.lua`. */
  files: Record<keyof Commands & string, string>;
}

/** One loaded script, for sending it by hand (inside a MULTI, say) with EVALSHA or EVAL. */
export interface LuaScript {
  readonly name: string;
  /** First 12 hex digits of the SHA-1 of the number of keys and `lua`: changes with the body. */
  readonly version: string;
  /** `<name>:<version>`: the name the script is registered under on a client. */
  readonly command: string;
  /** The source with its includes pasted in. */
  readonly lua: string;
  /** SHA-1 of `lua`, as EVALSHA names it. */
  readonly sha: string;
  readonly numberOfKeys: number;
}

type Arguments<Command> = Command extends (...args: infer A) => unknown ? A : never;
type Reply<Command> = Command extends (...args: never[]) => infer R ? R : never;

/**
 * A package's scripts. `Commands` declares each one as a method (its arguments, keys first, and
 * its reply); scripts are only called through `call` and `queue`, which send `<name>:<version>`.
 */
export interface LuaScripts<Commands> {
  /** Runs script `name` on `client` (registering the set on the client first). */
  call<Name extends keyof Commands & string>(
    client: RedisClient,
    name: Name,
    ...args: Arguments<Commands[Name]>
  ): Reply<Commands[Name]>;
  /** A pipeline on `client` that can queue these scripts (with `queue`). */
  pipeline(client: RedisClient): ChainableCommander;
  /** Queues script `name` on a pipeline from `pipeline`; its reply comes with the pipeline's. */
  queue<Name extends keyof Commands & string>(
    pipeline: ChainableCommander,
    name: Name,
    ...args: Arguments<Commands[Name]>
  ): void;
  /** One script, for sending it by hand. */
  script(name: keyof Commands & string): LuaScript;
}

type Callable = Record<string, ((...args: unknown[]) => unknown) | undefined>;

/**
 * Loads Lua scripts from files and registers them on an ioredis client with `defineCommand`,
 * which sends EVALSHA and falls back to EVAL when the server does not know the script yet (after
 * a restart or failover). Each package that owns scripts calls this once.
 *
 * Each script is registered as `<name>:<version>` (as BullMQ registers `<name>:<package
 * version>`), the version being a hash of its body: two script sets that differ, two versions of
 * Baton or of one package loaded twice, can share one client and one Redis and never run each
 * other's body under one name. A content hash rather than the package version, since every
 * package is `0.1.0` and a changed script keeps that version until a release.
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
      Object.entries<string>(options.files).map(([name, file]) => [
        name,
        loadScript(options.directory, name, file),
      ]),
    );
    return loaded;
  };
  const script = (name: string): LuaScript => {
    const found = load().get(name);
    if (found === undefined) {
      throw new TypeError(`No Lua script named ${name}.`);
    }
    return found;
  };
  const defined = new WeakSet<object>();
  const register = (client: RedisClient): RedisClient => {
    if (!defined.has(client)) {
      for (const each of load().values()) {
        client.defineCommand(each.command, { lua: each.lua, numberOfKeys: each.numberOfKeys });
      }
      defined.add(client);
    }
    return client;
  };
  const send = (target: object, name: string, args: unknown[]): unknown => {
    const { command } = script(name);
    const method = (target as Callable)[command];
    if (method === undefined) {
      throw new TypeError(`Script ${command} is not registered here (queue on scripts.pipeline).`);
    }
    return method.apply(target, args);
  };
  return {
    call: (client, name, ...args) => send(register(client), name, args) as never,
    pipeline: (client) => register(client).pipeline(),
    queue: (pipeline, name, ...args) => {
      send(pipeline, name, args);
    },
    script,
  };
}

const INCLUDE = /^--- @include "([a-z-]+)"$/gmu;

function loadScript(directory: URL, name: string, file: string): LuaScript {
  const source = readFileSync(new URL(file, directory), 'utf8');
  const lua = source.replace(INCLUDE, (_line, include: string) =>
    readFileSync(new URL(`includes/${include}.lua`, directory), 'utf8'),
  );
  const numberOfKeys = Number(/-(\d+)\.lua$/u.exec(file)?.[1]);
  const sha = createHash('sha1').update(lua).digest('hex');
  const version = createHash('sha1').update(`${numberOfKeys}\n${lua}`).digest('hex').slice(0, 12);
  return { name, version, command: `${name}:${version}`, lua, sha, numberOfKeys };
}
