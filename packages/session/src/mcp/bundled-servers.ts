import {
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * MCP servers Baton ships, runnable in the sandbox without a network: `.mcp.json` files written
 * for Claude Code start them with `npx -y <package>[@version]`, which would download them. In
 * Baton's sandbox `npx` is a small script that runs Baton's installed copy instead (whatever
 * version was asked for), and each package's own bin name works too. The installed packages are
 * shown read-only; nothing else of Baton's install is.
 */
export const BUNDLED_MCP_PACKAGES = [
  '@playwright/mcp',
  '@modelcontextprotocol/server-everything',
  '@modelcontextprotocol/server-filesystem',
] as const;

/** One package Baton can run in the sandbox. */
interface BundledServer {
  name: string;
  /** Its bin names (`playwright-mcp`). */
  bins: string[];
  /** Realpath of the script node runs. */
  script: string;
}

/** What a server's sandbox gets to run Baton's bundled servers. */
export interface BundledServers {
  servers: BundledServer[];
  /** Host directory of the `npx` and bin scripts, read-only in the sandbox and first on PATH. */
  binDirectory: string;
  /** Host paths the sandbox shows read-only: the install's `node_modules`. */
  readOnlyPaths: string[];
  /** A Playwright MCP configuration for the system Chromium, headless, on a closed network. */
  playwrightConfig: string;
}

/** Where the system Chromium is (Debian's `chromium` package). */
export const SYSTEM_CHROMIUM = '/usr/bin/chromium';
/**
 * Debian's `/usr/bin/chromium` is a shell script that sources `/etc/chromium.d/*`, which the
 * sandbox's `/etc` leaves out: the browser itself is started directly where it is there.
 */
const CHROMIUM_BINARY = '/usr/lib/chromium/chromium';

/** Flags Chromium needs in the sandbox: no own sandbox (no user namespaces inside), no GPU, no calls home. */
export const CHROMIUM_SANDBOX_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** The package directory of `name` as node would find it from this module, or undefined. */
function findPackage(name: string): string | undefined {
  let directory = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(directory, 'node_modules', name, 'package.json');
    if (existsSync(candidate)) return path.dirname(realpathSync(candidate));
    const parent = path.dirname(directory);
    if (parent === directory) return undefined;
    directory = parent;
  }
}

/** The outermost `node_modules` above `file`: with pnpm it holds `.pnpm`, every dependency's home. */
function outermostNodeModules(file: string): string | undefined {
  const parts = file.split(path.sep);
  const index = parts.indexOf('node_modules');
  return index < 0 ? undefined : parts.slice(0, index + 1).join(path.sep) || undefined;
}

function quote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

function npxScript(servers: readonly BundledServer[]): string {
  const cases = servers
    .map((server) => `  ${quote(server.name)}) exec /usr/bin/node ${quote(server.script)} "$@" ;;`)
    .join('\n');
  const names = servers.map((server) => server.name).join(', ');
  return `#!/bin/sh
# npx in Baton's sandbox: runs the MCP servers Baton ships (whatever version is asked for);
# nothing is downloaded.
while [ $# -gt 0 ]; do
  case "$1" in
    -y|--yes|-q|--quiet|--no-install) shift ;;
    *) break ;;
  esac
done
package="$1"
[ $# -gt 0 ] && shift
case "$package" in
  @*) rest="\${package#@}"; name="@\${rest%%@*}" ;;
  *) name="\${package%%@*}" ;;
esac
case "$name" in
${cases}
  *) echo "npx: $package is not available in Baton's sandbox (no downloads); available: ${names}" >&2; exit 127 ;;
esac
`;
}

let cached: BundledServers | undefined;

/**
 * Baton's bundled servers on this machine (those installed), with the scripts that run them:
 * made once per process under the system temporary directory and removed at exit.
 */
export function bundledServers(): BundledServers {
  if (cached !== undefined && existsSync(cached.binDirectory)) return cached;
  const servers: BundledServer[] = [];
  const readOnlyPaths = new Set<string>();
  for (const name of BUNDLED_MCP_PACKAGES) {
    const directory = findPackage(name);
    if (directory === undefined) continue;
    const manifest = JSON.parse(readFileSync(path.join(directory, 'package.json'), 'utf8')) as {
      bin?: string | Record<string, string>;
    };
    const bin = manifest.bin;
    const entries =
      typeof bin === 'string' ? [[name.split('/').pop() ?? name, bin]] : Object.entries(bin ?? {});
    const first = entries[0];
    if (first === undefined) continue;
    servers.push({
      name,
      bins: entries.map(([binName]) => binName ?? ''),
      script: path.join(directory, first[1] ?? ''),
    });
    const modules = outermostNodeModules(directory);
    if (modules !== undefined) readOnlyPaths.add(modules);
  }
  const binDirectory = mkdtempSync(path.join(os.tmpdir(), 'baton-mcp-bin-'));
  writeFileSync(path.join(binDirectory, 'npx'), npxScript(servers), { mode: 0o755 });
  for (const server of servers) {
    for (const bin of server.bins) {
      writeFileSync(
        path.join(binDirectory, bin),
        `#!/bin/sh\nexec /usr/bin/node ${quote(server.script)} "$@"\n`,
        { mode: 0o755 },
      );
    }
  }
  const playwrightConfig = path.join(binDirectory, 'playwright-mcp.json');
  writeFileSync(
    playwrightConfig,
    `${JSON.stringify(
      {
        browser: {
          browserName: 'chromium',
          isolated: true,
          launchOptions: {
            executablePath: existsSync(CHROMIUM_BINARY) ? CHROMIUM_BINARY : SYSTEM_CHROMIUM,
            headless: true,
            chromiumSandbox: false,
            args: CHROMIUM_SANDBOX_FLAGS,
          },
        },
        outputDir: '/tmp/playwright-mcp',
      },
      null,
      2,
    )}\n`,
  );
  process.once('exit', () => rmSync(binDirectory, { recursive: true, force: true }));
  cached = { servers, binDirectory, readOnlyPaths: [...readOnlyPaths], playwrightConfig };
  return cached;
}
