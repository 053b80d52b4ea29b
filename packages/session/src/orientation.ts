import type { MemoryStore } from '@baton/core';
import { FEATURES_STORE_PATH, parseFeatures, type Feature } from './features.js';
import { type CheckEvidence, describeEvidence } from './verification.js';
import {
  PROGRESS_STORE_PATH,
  readProgressArchives,
  splitProgressLog,
  type ProgressEntry,
} from './progress-log.js';

/**
 * The orientation: a compact summary of the project's memory that the harness puts in a
 * session's first user message, so the agent knows where things stand without reading every
 * file. It is a pure function of the memory (same memory, same text) and bounded whatever the
 * project's size: a few next features, the latest entries, counts for the rest.
 */

/** How much the orientation shows. */
export interface OrientationOptions {
  /** Failing features listed, in checklist order. Default 3. */
  nextFeatures?: number;
  /** Latest progress entries shown, newest last. Default 2. */
  latestEntries?: number;
  /** Longest progress entry shown before it is cut. Default 1,200 characters. */
  maxEntryChars?: number;
  /** Longest description or step shown before it is cut. Default 300 characters. */
  maxFieldChars?: number;
  /** Most steps shown per feature. Default 6. */
  maxSteps?: number;
}

const DEFAULTS: Required<OrientationOptions> = {
  nextFeatures: 3,
  latestEntries: 2,
  maxEntryChars: 1_200,
  maxFieldChars: 300,
  maxSteps: 6,
};

/** What the orientation is built from: the memory files, as read at the start of a session. */
export interface OrientationSnapshot {
  /** features.json text, `null` when missing. */
  featuresText: string | null;
  /** progress.md text, `null` when missing. */
  progressText: string | null;
  /** The archive files, oldest first. */
  archives: Array<{ path: string; entries: ProgressEntry[] }>;
  /** The workspace's last acknowledged checkpoint (a commit id), when known. */
  lastCheckpoint?: string | null | undefined;
  /**
   * Features Baton flipped back to failing because their re-run check failed (the project's
   * check record, not the memory): listed first, with what failed.
   */
  regressed?: readonly CheckEvidence[];
}

/** Reads what the orientation needs from the memory. */
export async function readOrientationSnapshot(
  store: MemoryStore,
  lastCheckpoint?: string | null,
): Promise<OrientationSnapshot> {
  const [featuresText, progressText, archives] = await Promise.all([
    store.read(FEATURES_STORE_PATH).catch(() => null),
    store.read(PROGRESS_STORE_PATH).catch(() => null),
    readProgressArchives(store),
  ]);
  return {
    featuresText,
    progressText,
    archives: archives.map((archive) => ({
      path: `/memories/${archive.storePath}`,
      entries: archive.entries,
    })),
    lastCheckpoint,
  };
}

function cut(text: string, max: number, hint = ''): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…${hint}` : line;
}

/** 1-based line of each feature id in the checklist text (the line holding its `"id"`). */
function featureLines(text: string, features: readonly Feature[]): Map<string, number> {
  const wanted = new Set(features.map((feature) => feature.id));
  const lines = new Map<string, number>();
  text.split('\n').forEach((line, index) => {
    for (const match of line.matchAll(/"id"\s*:\s*"((?:[^"\\]|\\.)*)"/g)) {
      let id: string;
      try {
        id = JSON.parse(`"${match[1] ?? ''}"`) as string;
      } catch {
        continue;
      }
      if (wanted.has(id) && !lines.has(id)) lines.set(id, index + 1);
    }
  });
  return lines;
}

function checklistSection(
  text: string | null,
  options: Required<OrientationOptions>,
  regressed: readonly CheckEvidence[] = [],
): string[] {
  if (text === null) {
    return [
      'Checklist /memories/features.json: missing. Re-create it from the goal before any other work.',
    ];
  }
  const parsed = parseFeatures(text);
  if (!parsed.ok) {
    return [
      `Checklist /memories/features.json: not valid (${cut(parsed.problems.join('; '), 400)}). It has to be repaired before any other work.`,
    ];
  }
  const features = parsed.features;
  const passing = features.filter((feature) => feature.passes).length;
  const failing = features.filter((feature) => !feature.passes);
  const lineCount = text.replace(/\n$/, '').split('\n').length;
  const head = `Checklist /memories/features.json (${lineCount} lines, one feature per line): ${passing} of ${features.length} pass, ${failing.length} fail.`;
  if (failing.length === 0) {
    return [head, `All ${features.length} features pass: nothing is left to do.`];
  }
  // Regressed features first: they worked once and a later change broke them.
  const regressedById = new Map(regressed.map((evidence) => [evidence.featureId, evidence]));
  const ordered = [
    ...failing.filter((feature) => regressedById.has(feature.id)),
    ...failing.filter((feature) => !regressedById.has(feature.id)),
  ];
  const shown = ordered.slice(
    0,
    Math.max(options.nextFeatures, ordered.filter((f) => regressedById.has(f.id)).length),
  );
  const lines = featureLines(text, shown);
  const out = [
    head,
    regressedById.size > 0
      ? `Next failing features, regressed ones first, then in checklist order (${shown.length} of ${failing.length}):`
      : `Next failing features, in checklist order (${shown.length} of ${failing.length}):`,
  ];
  for (const feature of shown) {
    const line = lines.get(feature.id);
    const evidence = regressedById.get(feature.id);
    out.push(
      `- ${feature.id} (features.json line ${line ?? '?'}): ${cut(feature.description, options.maxFieldChars)}`,
    );
    if (evidence !== undefined) {
      out.push(
        `  - REGRESSED: it passed, then Baton re-ran its check \`${cut(evidence.command, 200)}\` and it ${describeEvidence(evidence)}; Baton set it back to failing. Fix it first.${evidence.outputTail === '' ? '' : ` Output ends: ${cut(evidence.outputTail.split('\n').slice(-3).join(' | '), 300)}`}`,
      );
    }
    for (const step of feature.steps.slice(0, options.maxSteps)) {
      out.push(`  - ${cut(step, options.maxFieldChars)}`);
    }
    if (feature.steps.length > options.maxSteps) {
      out.push(`  - (${feature.steps.length - options.maxSteps} more steps in the checklist)`);
    }
  }
  return out;
}

function progressSection(
  snapshot: OrientationSnapshot,
  options: Required<OrientationOptions>,
): string[] {
  const { progressText, archives } = snapshot;
  const archived = archives.flatMap((archive) => archive.entries);
  const sessions = archived
    .map((entry) => entry.session)
    .filter((session): session is number => session !== undefined);
  const archiveNote =
    archives.length === 0
      ? ''
      : ` Older entries: ${archived.length} in ${archives.length} archive file${archives.length === 1 ? '' : 's'} under /memories/progress/${sessions.length > 0 ? ` (sessions ${sessions[0]}-${sessions[sessions.length - 1]})` : ''}, read-only.`;
  if (progressText === null) {
    return [`Progress log /memories/progress.md: missing.${archiveNote}`];
  }
  const split = splitProgressLog(progressText);
  const lineCount = progressText.replace(/\n$/, '').split('\n').length;
  const out = [
    `Progress log /memories/progress.md: ${lineCount} lines, ${split.entries.length} entr${split.entries.length === 1 ? 'y' : 'ies'}.${archiveNote}`,
  ];
  const latest = split.entries.slice(-options.latestEntries);
  if (latest.length === 0) return out;
  out.push('Latest progress entries (newest last):');
  for (const entry of latest) {
    const text =
      entry.text.length > options.maxEntryChars
        ? `${entry.text.slice(0, options.maxEntryChars)}\n… (cut: view /memories/progress.md for the rest)`
        : entry.text;
    out.push(text);
  }
  return out;
}

/** The orientation text, inside `<baton_orientation>` tags. */
export function renderOrientation(
  snapshot: OrientationSnapshot,
  options: OrientationOptions = {},
): string {
  const settings = { ...DEFAULTS, ...definedOnly(options) };
  const lines = [
    '<baton_orientation>',
    'Baton built this summary from /memories at the start of this session. It is current; open a file when you need more than it shows.',
    ...checklistSection(snapshot.featuresText, settings, snapshot.regressed),
    ...progressSection(snapshot, settings),
  ];
  if (snapshot.lastCheckpoint) {
    lines.push(`Last checkpoint of the workspace: commit ${snapshot.lastCheckpoint.slice(0, 12)}.`);
  }
  lines.push('</baton_orientation>');
  return lines.join('\n');
}

/** Builds the orientation from the memory. */
export async function buildOrientation(
  store: MemoryStore,
  options: OrientationOptions & {
    lastCheckpoint?: string | null | undefined;
    regressed?: readonly CheckEvidence[] | undefined;
  } = {},
): Promise<string> {
  const snapshot = await readOrientationSnapshot(store, options.lastCheckpoint);
  const { regressed, lastCheckpoint: _lastCheckpoint, ...rest } = options;
  return renderOrientation(regressed === undefined ? snapshot : { ...snapshot, regressed }, rest);
}

function definedOnly(options: OrientationOptions): OrientationOptions {
  return Object.fromEntries(
    Object.entries(options).filter(([, value]) => value !== undefined),
  ) as OrientationOptions;
}
