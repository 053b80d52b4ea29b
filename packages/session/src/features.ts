import type { MemoryStore } from '@baton/core';

/** One entry of `/memories/features.json` (layout in docs/sessions.md). */
export interface Feature {
  id: string;
  description: string;
  steps: string[];
  /**
   * A shell command, run in the workspace (in the sandbox), that exits 0 only when the feature
   * works. Baton runs it before it accepts `passes: true` and again at the end of sessions
   * (verification.ts). Optional: a feature without one (and without a project default check)
   * is accepted as claimed.
   */
  check?: string | undefined;
  passes: boolean;
}

/** Longest `check` command a feature may carry, in characters. */
export const MAX_CHECK_CHARS = 2_000;

/** How many features pass, out of how many. */
export interface FeatureCounts {
  passing: number;
  total: number;
}

/** The store path (below `/memories`) of the feature checklist. */
export const FEATURES_STORE_PATH = 'features.json';
/** The virtual path of the feature checklist, as the model sees it. */
export const FEATURES_PATH = '/memories/features.json';
/** The virtual path of the progress log. */
export const PROGRESS_PATH = '/memories/progress.md';
/** The virtual path of the startup notes. */
export const STARTUP_PATH = '/memories/startup.md';

/** Result of parsing a features.json text: the features, or every problem found. */
export type ParsedFeatures = { ok: true; features: Feature[] } | { ok: false; problems: string[] };

/** Parse and validate features.json content. Problems are short sentences a model can act on. */
export function parseFeatures(text: string): ParsedFeatures {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problems: ['the file is not valid JSON'] };
  }
  if (!Array.isArray(value)) {
    return { ok: false, problems: ['the top level must be a JSON array of features'] };
  }
  const problems: string[] = [];
  const features: Feature[] = [];
  const seen = new Set<string>();
  value.forEach((item: unknown, index) => {
    const where = `feature #${index + 1}`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      problems.push(`${where} must be an object`);
      return;
    }
    const record = item as Record<string, unknown>;
    const { id, description, steps, check, passes } = record;
    if (typeof id !== 'string' || id.trim() === '')
      problems.push(`${where} needs a non-empty string "id"`);
    else if (seen.has(id)) problems.push(`${where} repeats the id "${id}"`);
    else seen.add(id);
    if (typeof description !== 'string') problems.push(`${where} needs a string "description"`);
    if (!Array.isArray(steps) || !steps.every((step) => typeof step === 'string'))
      problems.push(`${where} needs "steps" as an array of strings`);
    if (typeof passes !== 'boolean') problems.push(`${where} needs a boolean "passes"`);
    const checkProblem = checkFieldProblem(check);
    if (checkProblem !== null) problems.push(`${where} ${checkProblem}`);
    if (
      checkProblem === null &&
      typeof id === 'string' &&
      typeof description === 'string' &&
      Array.isArray(steps) &&
      typeof passes === 'boolean'
    ) {
      features.push(
        typeof check === 'string'
          ? { id, description, steps: steps as string[], check, passes }
          : { id, description, steps: steps as string[], passes },
      );
    }
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, features };
}

/** What is wrong with a feature's `check` field, or null when it is absent or a usable command. */
function checkFieldProblem(check: unknown): string | null {
  if (check === undefined) return null;
  if (typeof check !== 'string' || check.trim() === '') {
    return 'has a "check" that is not a non-empty shell command string (leave "check" out for a feature without one)';
  }
  if (check.length > MAX_CHECK_CHARS) {
    return `has a "check" longer than ${MAX_CHECK_CHARS} characters (put a long check in a script in the workspace and run that)`;
  }
  return null;
}

/**
 * One feature as one line of JSON:
 * `{"id": "F1", "description": "...", "steps": [...], "check": "...", "passes": false}`
 * (`check` only when the feature has one).
 */
export function formatFeatureLine(feature: Feature): string {
  const check = feature.check === undefined ? '' : `, "check": ${JSON.stringify(feature.check)}`;
  return `{"id": ${JSON.stringify(feature.id)}, "description": ${JSON.stringify(feature.description)}, "steps": ${JSON.stringify(feature.steps)}${check}, "passes": ${feature.passes}}`;
}

/**
 * The checklist layout Baton keeps: a JSON array with one feature per line. A flip changes one
 * line, and any feature can be read on its own with `view_range [n, n]` however long the list.
 */
export function formatFeatures(features: readonly Feature[]): string {
  if (features.length === 0) return '[]\n';
  return `[\n${features.map((feature) => `  ${formatFeatureLine(feature)}`).join(',\n')}\n]\n`;
}

/**
 * Rewrites a valid checklist into the one-feature-per-line layout when it is in another one
 * (same features, same order, same values). Returns true when it rewrote the file.
 */
export async function normalizeFeaturesLayout(
  store: MemoryStore,
  context: { session?: string } = {},
): Promise<boolean> {
  const text = await store.read(FEATURES_STORE_PATH).catch(() => null);
  if (text === null) return false;
  const parsed = parseFeatures(text);
  if (!parsed.ok || formatFeatures(parsed.features) === text) return false;
  let rewritten = false;
  await store.edit(
    FEATURES_STORE_PATH,
    (current) => {
      const again = parseFeatures(current);
      if (!again.ok) return current;
      const formatted = formatFeatures(again.features);
      rewritten = formatted !== current;
      return formatted;
    },
    { command: 'normalize', ...context },
  );
  return rewritten;
}

/** The project's feature checklist from its memory, or `null` if missing or not valid. */
export async function readFeatures(store: MemoryStore): Promise<Feature[] | null> {
  let text: string | null;
  try {
    text = await store.read(FEATURES_STORE_PATH);
  } catch {
    return null;
  }
  if (text === null) return null;
  const parsed = parseFeatures(text);
  return parsed.ok ? parsed.features : null;
}

/** Passing/total counts; a missing checklist counts as 0/0. */
export function countFeatures(features: readonly Feature[] | null): FeatureCounts {
  if (features === null) return { passing: 0, total: 0 };
  return { passing: features.filter((feature) => feature.passes).length, total: features.length };
}

/** True when there is at least one feature and every feature passes. */
export function allFeaturesPass(features: readonly Feature[] | null): boolean {
  return features !== null && features.length > 0 && features.every((feature) => feature.passes);
}

/** Ids that went from not passing (or absent) to passing between two snapshots. */
export function flippedFeatureIds(
  before: readonly Feature[] | null,
  after: readonly Feature[] | null,
): string[] {
  if (after === null) return [];
  const passedBefore = new Set((before ?? []).filter((f) => f.passes).map((f) => f.id));
  return after.filter((f) => f.passes && !passedBefore.has(f.id)).map((f) => f.id);
}
