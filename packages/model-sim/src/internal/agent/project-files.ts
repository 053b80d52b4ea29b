/**
 * What the scripted agent writes: the feature checklist from a goal, the progress log, the
 * startup note and the workspace scripts, and how it reads the memory tool's view output back.
 */

export interface Feature {
  id: string;
  description: string;
  steps: string[];
  /** The shell command Baton runs to verify the feature (absent for a `[sim:no-check]` feature). */
  check?: string | undefined;
  passes: boolean;
}

/**
 * Markers a goal bullet may carry to make the scripted agent misbehave on that feature, so the
 * verification of claims can be tested end to end:
 * - `[sim:claim-first]`: the agent flips the feature to passing before writing any of it;
 * - `[sim:breaks Fn]`: implementing the feature also breaks feature Fn's script;
 * - `[sim:no-check]`: the feature gets no `check` in the checklist.
 */
export const SIM_FAULT_MARKERS = {
  claimFirst: /\[sim:claim-first\]/,
  breaks: /\[sim:breaks ([A-Za-z0-9_-]+)\]/,
  noCheck: /\[sim:no-check\]/,
  /** In the goal: the agent does feature after feature in one session, until its context fills. */
  keepGoing: /\[sim:keep-going\]/,
} as const;

/**
 * Markers that make the scripted agent use MCP tools on a feature, after writing it and before
 * its check (docs/mcp.md):
 * - `[sim:web-app PORT]`: it also writes a tiny web app (`app/server.js`, a Node HTTP server on
 *   127.0.0.1:PORT whose page says the feature's ok marker), starts it from bash in the background
 *   (`node app/server.js &`) and waits from bash until it answers, all before the MCP calls;
 * - `[sim:mcp TOOL {json}]`: it calls the tool with that input (in order, each retried once);
 * - `[sim:mcp-expect TEXT]`: the last of those results must contain TEXT, or the feature stays
 *   failing and the agent says what it saw.
 */
export const SIM_MCP_MARKERS = {
  webApp: /\[sim:web-app (\d{2,5})\]/,
  call: /\[sim:mcp ([A-Za-z0-9_-]{1,64}) (\{.*?\})\]/g,
  expect: /\[sim:mcp-expect ([^\]]+)\]/,
} as const;

/** The MCP calls a feature's description asks for, in order (bad JSON is left out). */
export function simMcpCalls(
  description: string,
): Array<{ tool: string; input: Record<string, unknown> }> {
  const calls: Array<{ tool: string; input: Record<string, unknown> }> = [];
  for (const match of description.matchAll(SIM_MCP_MARKERS.call)) {
    try {
      const input = JSON.parse(match[2] ?? '') as unknown;
      if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
        calls.push({ tool: match[1] ?? '', input: input as Record<string, unknown> });
      }
    } catch {
      // Not a call the agent can make.
    }
  }
  return calls;
}

/** The web app of `[sim:web-app PORT]`: a page that says the feature's ok marker. */
export function webAppServerText(id: string, port: number): string {
  return [
    "const http = require('node:http');",
    `const page = '<!doctype html><html><head><title>${id} app</title></head><body><h1 id="status">${okMarker(id)}</h1></body></html>';`,
    "http.createServer((request, response) => { response.writeHead(200, { 'content-type': 'text/html' }); response.end(page); })",
    `  .listen(${port}, '127.0.0.1', () => console.error('app listening on ${port}'));`,
    '',
  ].join('\n');
}

export const WEB_APP_SERVER = 'app/server.js';

/** The bash command that starts the web app in the background (the bash tool's `cmd &`). */
export const WEB_APP_START_COMMAND = `node ${WEB_APP_SERVER} &`;

/** The bash command that waits, at most 20 s, until the app answers on 127.0.0.1:PORT. */
export function webAppWaitCommand(port: number): string {
  const script = [
    "const http = require('node:http');",
    'let tries = 0;',
    `const look = () => http.get('http://127.0.0.1:${port}/', () => process.exit(0))`,
    "  .on('error', () => (++tries < 200 ? setTimeout(look, 100) : process.exit(1)));",
    'look();',
  ].join(' ');
  return `node -e "${script}" && echo "app answers on ${port}"`;
}

/** The script text that makes a feature's check fail (what `[sim:breaks Fn]` writes). */
export function brokenScriptText(id: string): string {
  return [
    '#!/bin/sh',
    `# ${id}: broken by a later change`,
    `echo "${id} broken" >&2`,
    'exit 1',
    '',
  ].join('\n');
}

export const FEATURES_PATH = '/memories/features.json';
export const PROGRESS_PATH = '/memories/progress.md';
export const STARTUP_PATH = '/memories/startup.md';

/** Goal bullet lines (`- ...` or `* ...`); a goal without bullets is one feature (its first line). */
export function goalFeatures(goal: string): string[] {
  const bullets = goal
    .split('\n')
    .map((line) => /^\s*[-*]\s+(.+?)\s*$/.exec(line)?.[1])
    .filter((text): text is string => text !== undefined && text.length > 0);
  if (bullets.length > 0) return bullets;
  const firstLine = goal
    .split('\n')
    .map((line) => line.trim())
    .find((line) => line.length > 0);
  return [firstLine ?? 'Complete the project goal'];
}

/** Workspace file that implements a feature (lower-case id, safe characters only). */
export function featureScript(id: string): string {
  return `features/${id.toLowerCase().replace(/[^a-z0-9-]/g, '-')}.sh`;
}

export function checkCommand(id: string): string {
  return `sh ${featureScript(id)}`;
}

/** The `check` the agent writes for a feature: the script must print its marker. */
function featureCheck(id: string): string {
  return `sh ${featureScript(id)} | grep -q '${okMarker(id)}'`;
}

/** What the check prints when the feature works. */
export function okMarker(id: string): string {
  return `${id} ok`;
}

export function buildFeatures(goal: string): Feature[] {
  return goalFeatures(goal).map((description, index) => {
    const id = `F${index + 1}`;
    const steps = [`Run \`${checkCommand(id)}\` in the workspace`, `It prints "${okMarker(id)}"`];
    return SIM_FAULT_MARKERS.noCheck.test(description)
      ? { id, description, steps, passes: false }
      : { id, description, steps, check: featureCheck(id), passes: false };
  });
}

/** One checklist line: a feature as one line of JSON (the layout Baton's prompts ask for). */
function featureLine(feature: Feature): string {
  const check = feature.check === undefined ? '' : `, "check": ${JSON.stringify(feature.check)}`;
  return `{"id": ${JSON.stringify(feature.id)}, "description": ${JSON.stringify(feature.description)}, "steps": ${JSON.stringify(feature.steps)}${check}, "passes": ${feature.passes}}`;
}

/**
 * The checklist with one feature per line, so a flip changes one line and any feature can be
 * read on its own with `view_range`.
 */
export function featuresFileText(features: Feature[]): string {
  if (features.length === 0) return '[]\n';
  return `[\n${features.map((feature) => `  ${featureLine(feature)}`).join(',\n')}\n]\n`;
}

/** Largest `file_text`/`new_str` the agent sends in one call, so a reply stays under max_tokens. */
export const MAX_WRITE_CHARS = 9_000;

/**
 * The checklist written in parts that each fit in one reply: the file with the first features,
 * then `str_replace` calls that each append the next features before the closing bracket.
 */
export function featuresFileParts(features: Feature[]): {
  first: string;
  appends: Array<{ old: string; next: string }>;
} {
  const lines = features.map((feature) => `  ${featureLine(feature)}`);
  const chunks: string[][] = [];
  let current: string[] = [];
  let size = 0;
  for (const line of lines) {
    if (current.length > 0 && size + line.length > MAX_WRITE_CHARS) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(line);
    size += line.length + 2;
  }
  if (current.length > 0) chunks.push(current);
  const [head = [], ...rest] = chunks;
  const first = head.length === 0 ? '[]\n' : `[\n${head.join(',\n')}\n]\n`;
  const appends: Array<{ old: string; next: string }> = [];
  let last = head[head.length - 1] ?? '';
  for (const chunk of rest) {
    appends.push({ old: `${last}\n]`, next: `${last},\n${chunk.join(',\n')}\n]` });
    last = chunk[chunk.length - 1] ?? '';
  }
  return { first, appends };
}

function shellSingleQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export function featureScriptText(feature: Pick<Feature, 'id' | 'description'>): string {
  const line = feature.description.replace(/\s+/g, ' ');
  return [
    '#!/bin/sh',
    `# ${feature.id}: ${line}`,
    `echo ${shellSingleQuote(`${okMarker(feature.id)}: ${line}`)}`,
    '',
  ].join('\n');
}

export const INIT_SCRIPT = 'init.sh';

export function initScriptText(): string {
  return [
    '#!/bin/sh',
    '# Checks the workspace: runs every feature script written so far.',
    'set -e',
    'for script in features/*.sh; do',
    '  if [ -e "$script" ]; then sh "$script"; fi',
    'done',
    'echo "workspace ok"',
    '',
  ].join('\n');
}

export function startupText(): string {
  return [
    '# Startup',
    '',
    `- Check the whole workspace: \`sh ${INIT_SCRIPT}\` (runs every feature script).`,
    '- Each feature Fn lives in `features/fn.sh`; `sh features/fn.sh` prints "Fn ok" when it works.',
    '- The checklist is /memories/features.json; the log is /memories/progress.md.',
    '',
  ].join('\n');
}

/** Whether a tool result says the path is missing (memory tool protocol strings). */
export function isMissing(text: string): boolean {
  return /does not exist/i.test(text);
}

/**
 * The file content from a memory or text-editor `view` result: the header line dropped and the
 * 6-wide line numbers and TAB stripped. Undefined when the text is not a file view (e.g. the
 * result was cleared by context editing).
 */
export function fileFromView(text: string): string | undefined {
  const lines = text.split('\n');
  const header = lines[0] ?? '';
  if (!/^Here's the content of /.test(header)) return undefined;
  const body: string[] = [];
  for (const line of lines.slice(1)) {
    const match = /^\s*\d+\t(.*)$/.exec(line);
    if (match) body.push(match[1] ?? '');
    else if (line.trim() === '') continue;
    else return undefined;
  }
  return body.join('\n');
}

/** A page of a file view: its numbered lines and, when the view was cut, where to read on. */
export interface ViewPage {
  lines: Map<number, string>;
  /** Set when the view was cut: the first line not shown and the file's line count. */
  cut: { next: number; total: number } | undefined;
}

const PAGING_HINT =
  /^\[Output cut at [\d,]+ characters: showing lines (\d+)-(\d+) of (\d+)\. To read on, view this file again with view_range \[(\d+), -?\d+\]\.\]$/;

/**
 * The numbered lines of a `view` result, including a view cut at the size limit (its last line
 * says where to read on). Undefined when the text is not a file view (e.g. cleared by context
 * editing).
 */
export function pageFromView(text: string): ViewPage | undefined {
  const rows = text.split('\n');
  if (!/^Here's the content of /.test(rows[0] ?? '')) return undefined;
  const lines = new Map<number, string>();
  let cut: ViewPage['cut'];
  for (const row of rows.slice(1)) {
    const match = /^\s*(\d+)\t(.*)$/.exec(row);
    if (match) {
      lines.set(Number(match[1]), match[2] ?? '');
      continue;
    }
    if (row.trim() === '') continue;
    const hint = PAGING_HINT.exec(row);
    if (hint) {
      cut = { next: Number(hint[4]), total: Number(hint[3]) };
      continue;
    }
    // Anything else (a line longer than the whole view, a cleared result): not a readable page.
    return undefined;
  }
  return { lines, cut };
}

/**
 * Pages of one file read so far, assembled: the whole text once lines 1..N are all known (N from
 * a cut hint, or the last line of an uncut view that reached the end of the file).
 */
export class PagedFile {
  readonly lines = new Map<number, string>();
  total: number | undefined;
  next = 1;

  /** Adds a page; `toEnd` says the view asked for the rest of the file (no range, or `[n, -1]`). */
  add(page: ViewPage, toEnd: boolean): void {
    for (const [number, line] of page.lines) this.lines.set(number, line);
    if (page.cut) {
      this.total = page.cut.total;
      this.next = Math.max(this.next, page.cut.next);
    } else if (toEnd) {
      const last = Math.max(0, ...page.lines.keys());
      this.total = last;
      this.next = last + 1;
    }
  }

  /** The first line still missing, or undefined when the whole file is known. */
  missingFrom(): number | undefined {
    if (this.total === undefined) return this.next;
    for (let line = 1; line <= this.total; line++) if (!this.lines.has(line)) return line;
    return undefined;
  }

  text(): string | undefined {
    if (this.missingFrom() !== undefined || this.total === undefined) return undefined;
    const out: string[] = [];
    for (let line = 1; line <= this.total; line++) out.push(this.lines.get(line) ?? '');
    return out.join('\n');
  }
}

/** The checklist from its text, or undefined when it is not readable JSON of features. */
export function featuresFromText(
  content: string,
): { text: string; features: Feature[] } | undefined {
  try {
    const parsed: unknown = JSON.parse(content);
    if (!Array.isArray(parsed)) return undefined;
    const features: Feature[] = [];
    for (const item of parsed) {
      if (typeof item !== 'object' || item === null) return undefined;
      const record = item as Record<string, unknown>;
      if (typeof record['id'] !== 'string') return undefined;
      features.push({
        id: record['id'],
        description:
          typeof record['description'] === 'string' ? record['description'] : record['id'],
        steps: Array.isArray(record['steps']) ? record['steps'].map(String) : [],
        ...(typeof record['check'] === 'string' ? { check: record['check'] } : {}),
        passes: record['passes'] === true,
      });
    }
    return { text: content, features };
  } catch {
    return undefined;
  }
}

/** The checklist from a whole (uncut) view result. */
export function featuresFromView(text: string): { text: string; features: Feature[] } | undefined {
  const content = fileFromView(text);
  return content === undefined ? undefined : featuresFromText(content);
}

/**
 * The exact `"id": ... "passes": false` span of one feature in the file text: several lines in a
 * pretty-printed file, so the replacement is unique and shows the whole entry.
 */
export function passesSpan(fileText: string, id: string): string | undefined {
  const escaped = id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`"id"\\s*:\\s*"${escaped}"[\\s\\S]*?"passes"\\s*:\\s*false`).exec(
    fileText,
  );
  const span = match?.[0];
  // A span reaching into the next entry means this feature already passes.
  if (span === undefined || /"id"\s*:/.test(span.slice(4))) return undefined;
  return span;
}

/** Line count of a file view for `insert_line` (a trailing empty line does not count). */
export function insertLineAtEnd(content: string): number {
  const lines = content.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines.length;
}
