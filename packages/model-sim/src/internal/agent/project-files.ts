/**
 * What the scripted agent writes: the feature checklist from a goal, the progress log, the
 * startup note and the workspace scripts, and how it reads the memory tool's view output back.
 */

export interface Feature {
  id: string;
  description: string;
  steps: string[];
  passes: boolean;
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

/** What the check prints when the feature works. */
export function okMarker(id: string): string {
  return `${id} ok`;
}

export function buildFeatures(goal: string): Feature[] {
  return goalFeatures(goal).map((description, index) => {
    const id = `F${index + 1}`;
    return {
      id,
      description,
      steps: [`Run \`${checkCommand(id)}\` in the workspace`, `It prints "${okMarker(id)}"`],
      passes: false,
    };
  });
}

export function featuresFileText(features: Feature[]): string {
  return `${JSON.stringify(features, null, 2)}\n`;
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

/** The checklist from a view result, or undefined when it is not readable JSON of features. */
export function featuresFromView(text: string): { text: string; features: Feature[] } | undefined {
  const content = fileFromView(text);
  if (content === undefined) return undefined;
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
        passes: record['passes'] === true,
      });
    }
    return { text: content, features };
  } catch {
    return undefined;
  }
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
