import type { MemoryChange, MemoryStore } from '@baton/core';

/**
 * The progress log over many sessions: `/memories/progress.md` keeps a short index and the latest
 * entries; older entries move, in order and unchanged, into archive files under
 * `/memories/progress/` (`0001.md`, `0002.md`, ...), each small enough for one memory view.
 * Nothing is ever deleted: `readProgressLog` gives the whole log back, oldest entry first.
 */

/** Store path of the progress log. */
export const PROGRESS_STORE_PATH = 'progress.md';
/** Store path of the archive directory. */
export const PROGRESS_ARCHIVE_STORE_DIR = 'progress';
/** Virtual path of the archive directory, as the model sees it. */
export const PROGRESS_ARCHIVE_DIR = '/memories/progress';

/** When and how the progress log rolls over. */
export interface ProgressRolloverOptions {
  /** Roll over once progress.md is longer than this many characters. Default 8,000 (half a view). */
  maxChars?: number;
  /** Characters of the latest entries kept in progress.md after a rollover (at least one entry). Default 3,000. */
  keepChars?: number;
  /** Largest archive file in characters, so one view shows it whole. Default 12,000. */
  archiveMaxChars?: number;
}

export const DEFAULT_PROGRESS_ROLLOVER: Required<ProgressRolloverOptions> = {
  maxChars: 8_000,
  keepChars: 3_000,
  archiveMaxChars: 12_000,
};

/** One entry of the log: a `## ` heading and the lines up to the next one. */
export interface ProgressEntry {
  /** The heading line without `## `. */
  heading: string;
  /** The whole entry, heading included, without trailing blank lines. */
  text: string;
  /** The session number from a `## Session N ...` heading. */
  session: number | undefined;
}

/** The log split into what precedes the first entry and the entries. */
export interface SplitProgressLog {
  /** Lines before the first entry (title, notes), Baton's archive index left out. */
  preamble: string;
  entries: ProgressEntry[];
}

/** One archive file as the index lists it. */
export interface ProgressArchive {
  /** Virtual path, e.g. `/memories/progress/0001.md`. */
  path: string;
  entries: number;
  firstSession: number | undefined;
  lastSession: number | undefined;
}

/** What a rollover did. */
export interface ProgressRollover {
  /** Entries moved out of progress.md. */
  moved: number;
  /** Archive files written (virtual paths), in order. */
  archives: string[];
  /** The changes made, in the shape of the memory tool's `memory-change` reports. */
  changes: MemoryChange[];
}

const INDEX_HEADER =
  'Older entries are archived, oldest first, in /memories/progress/ (written by Baton, read-only; view one when you need the history):';
const INDEX_LINE = /^- \/memories\/progress\/\d+\.md\b/;
const ARCHIVE_NAME = /^(\d{4,})\.md$/;

/** Splits a progress log at its `## ` headings. */
export function splitProgressLog(text: string): SplitProgressLog {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const preamble: string[] = [];
  const entries: ProgressEntry[] = [];
  let current: string[] | undefined;
  const close = () => {
    if (current === undefined) return;
    while (current.length > 1 && current[current.length - 1]!.trim() === '') current.pop();
    const heading = current[0]!.slice(3).trim();
    const session = /^Session (\d+)\b/.exec(heading)?.[1];
    entries.push({
      heading,
      text: current.join('\n'),
      session: session === undefined ? undefined : Number(session),
    });
  };
  for (const line of lines) {
    if (line.startsWith('## ')) {
      close();
      current = [line];
    } else if (current !== undefined) current.push(line);
    else if (line !== INDEX_HEADER && !INDEX_LINE.test(line)) preamble.push(line);
  }
  close();
  return { preamble: preamble.join('\n').trim(), entries };
}

function sessionRange(archive: ProgressArchive): string {
  const { firstSession, lastSession, entries } = archive;
  const count = `${entries} ${entries === 1 ? 'entry' : 'entries'}`;
  if (firstSession === undefined || lastSession === undefined) return count;
  return firstSession === lastSession
    ? `session ${firstSession} (${count})`
    : `sessions ${firstSession}-${lastSession} (${count})`;
}

/** progress.md text: the preamble, the archive index, then the entries. */
export function formatProgressLog(
  preamble: string,
  archives: readonly ProgressArchive[],
  entries: readonly ProgressEntry[],
): string {
  const parts = [preamble === '' ? '# Progress log' : preamble];
  if (archives.length > 0) {
    parts.push(
      [
        INDEX_HEADER,
        ...archives.map((archive) => `- ${archive.path}: ${sessionRange(archive)}`),
      ].join('\n'),
    );
  }
  parts.push(...entries.map((entry) => entry.text));
  return `${parts.join('\n\n')}\n`;
}

function archiveText(number: number, entries: readonly ProgressEntry[]): string {
  return `# Progress log, archive ${number}\n\n${entries.map((entry) => entry.text).join('\n\n')}\n`;
}

function describeArchive(path: string, entries: readonly ProgressEntry[]): ProgressArchive {
  const sessions = entries
    .map((entry) => entry.session)
    .filter((session): session is number => session !== undefined);
  return {
    path,
    entries: entries.length,
    firstSession: sessions[0],
    lastSession: sessions[sessions.length - 1],
  };
}

function archiveStorePath(number: number): string {
  return `${PROGRESS_ARCHIVE_STORE_DIR}/${String(number).padStart(4, '0')}.md`;
}

/** The archive files, oldest first, with their entries. */
export async function readProgressArchives(
  store: MemoryStore,
): Promise<Array<{ number: number; storePath: string; entries: ProgressEntry[] }>> {
  const stat = await store.stat(PROGRESS_ARCHIVE_STORE_DIR);
  if (stat === null || stat.kind !== 'directory') return [];
  const listed = await store.list(PROGRESS_ARCHIVE_STORE_DIR, { depth: 1 });
  const numbered = listed
    .filter((entry) => entry.kind === 'file')
    .map((entry) => {
      const name = entry.path.slice(PROGRESS_ARCHIVE_STORE_DIR.length + 1);
      const match = ARCHIVE_NAME.exec(name);
      return match ? { number: Number(match[1]), storePath: entry.path } : undefined;
    })
    .filter((entry): entry is { number: number; storePath: string } => entry !== undefined)
    .sort((left, right) => left.number - right.number);
  const archives = [];
  for (const archive of numbered) {
    const text = (await store.read(archive.storePath)) ?? '';
    archives.push({ ...archive, entries: splitProgressLog(text).entries });
  }
  return archives;
}

/**
 * The whole progress log, oldest entry first: progress.md's preamble, every archived entry, then
 * the entries still in progress.md (progress.md as it is while nothing was archived). `null` when
 * there is no log at all.
 */
export async function readProgressLog(store: MemoryStore): Promise<string | null> {
  const [current, archives] = await Promise.all([
    store.read(PROGRESS_STORE_PATH),
    readProgressArchives(store),
  ]);
  if (archives.length === 0) return current;
  const split = splitProgressLog(current ?? '');
  const entries = [...archives.flatMap((archive) => archive.entries), ...split.entries];
  return formatProgressLog(split.preamble, [], entries);
}

/** Every entry of the whole log, oldest first. */
export async function readProgressEntries(store: MemoryStore): Promise<ProgressEntry[]> {
  const text = await readProgressLog(store);
  return text === null ? [] : splitProgressLog(text).entries;
}

/** How many of the oldest entries to move so the kept ones fit in `keepChars` (at least one stays). */
function entriesToMove(entries: readonly ProgressEntry[], keepChars: number): number {
  let kept = 0;
  let size = 0;
  for (let index = entries.length - 1; index >= 0; index--) {
    size += entries[index]!.text.length + 2;
    if (kept > 0 && size > keepChars) break;
    kept += 1;
  }
  return entries.length - kept;
}

/**
 * Moves the oldest entries of progress.md into archive files once it is longer than
 * `maxChars`. Archives are written before progress.md drops the entries, so a crash in between
 * leaves an entry twice (the next rollover skips an entry the last archive already ends with),
 * never zero times. Returns `null` when nothing had to move.
 */
export async function rollOverProgressLog(
  store: MemoryStore,
  options: ProgressRolloverOptions & { session?: string | undefined; now?: () => number } = {},
): Promise<ProgressRollover | null> {
  const limits = { ...DEFAULT_PROGRESS_ROLLOVER, ...definedOnly(options) };
  const now = options.now ?? Date.now;
  const text = await store.read(PROGRESS_STORE_PATH);
  if (text === null || text.length <= limits.maxChars) return null;
  const split = splitProgressLog(text);
  const count = entriesToMove(split.entries, limits.keepChars);
  if (count === 0) return null;
  const moved = split.entries.slice(0, count);

  const archives = await readProgressArchives(store);
  const last = archives[archives.length - 1];
  let open = last === undefined ? { number: 1, entries: [] as ProgressEntry[] } : { ...last };
  const touched = new Map<number, ProgressEntry[]>();
  const archivedTexts = new Set(
    archives.flatMap((archive) => archive.entries.map((entry) => entry.text)),
  );
  for (const entry of moved) {
    // Already archived by a rollover that stopped before it could shorten progress.md.
    if (archivedTexts.has(entry.text)) continue;
    const size = archiveText(open.number, [...open.entries, entry]).length;
    if (open.entries.length > 0 && size > limits.archiveMaxChars) {
      open = { number: open.number + 1, entries: [] };
    }
    open = { ...open, entries: [...open.entries, entry] };
    touched.set(open.number, open.entries);
  }
  const changes: MemoryChange[] = [];
  const context = {
    command: 'rollover',
    session: options.session,
  };
  for (const [number, entries] of touched) {
    const content = archiveText(number, entries);
    await store.write(archiveStorePath(number), content, { ...context, mode: 'overwrite' });
    changes.push(change('create', `/memories/${archiveStorePath(number)}`, content, now, options));
  }

  const index = [
    ...archives
      .filter((archive) => !touched.has(archive.number))
      .map((archive) => ({ number: archive.number, entries: archive.entries })),
    ...[...touched].map(([number, entries]) => ({ number, entries })),
  ]
    .sort((left, right) => left.number - right.number)
    .map((archive) =>
      describeArchive(`/memories/${archiveStorePath(archive.number)}`, archive.entries),
    );
  const movedTexts = new Set(moved.map((entry) => entry.text));
  const { after } = await store.edit(
    PROGRESS_STORE_PATH,
    (current) => {
      // Recomputed from the current text: only archived entries leave, whatever was appended since.
      const latest = splitProgressLog(current);
      let skip = 0;
      while (skip < latest.entries.length && movedTexts.has(latest.entries[skip]!.text)) skip += 1;
      return formatProgressLog(latest.preamble, index, latest.entries.slice(skip));
    },
    context,
  );
  changes.push(change('str_replace', '/memories/progress.md', after, now, options));
  return {
    moved: moved.length,
    archives: [...touched.keys()].map((n) => `/memories/${archiveStorePath(n)}`),
    changes,
  };
}

function change(
  command: MemoryChange['command'],
  path: string,
  content: string,
  now: () => number,
  options: { session?: string | undefined },
): MemoryChange {
  return {
    command,
    path,
    bytes: Buffer.byteLength(content),
    at: now(),
    session: options.session,
  };
}

function definedOnly(options: ProgressRolloverOptions): ProgressRolloverOptions {
  const out: ProgressRolloverOptions = {};
  if (options.maxChars !== undefined) out.maxChars = options.maxChars;
  if (options.keepChars !== undefined) out.keepChars = options.keepChars;
  if (options.archiveMaxChars !== undefined) out.archiveMaxChars = options.archiveMaxChars;
  return out;
}

/** True for a store path inside the archive directory (or the directory itself). */
export function isProgressArchivePath(storePath: string): boolean {
  return (
    storePath === PROGRESS_ARCHIVE_STORE_DIR ||
    storePath.startsWith(`${PROGRESS_ARCHIVE_STORE_DIR}/`)
  );
}

/** The refusal the model reads when it tries to change an archive. */
export const PROGRESS_ARCHIVE_RULE =
  `Refused: ${PROGRESS_ARCHIVE_DIR}/ holds the archived progress log; Baton writes it and it is read-only. ` +
  'Nothing was changed. Add new entries to the end of /memories/progress.md.';
