import { appendFile, readFile } from 'node:fs/promises';
import type { OperatorGuidance } from '@baton/session';
import type { FileProjectPaths } from './file-project-paths.js';
import {
  GUIDANCE_KEPT,
  newGuidance,
  pendingGuidance,
  type ProjectGuidance,
  type StoredGuidance,
} from './operator.js';

/**
 * A `baton run` project's guidance in its directory: `guidance.jsonl` holds the messages and
 * `guidance-acks.jsonl` the acknowledgements, one JSON object a line. `baton say --local` appends
 * from its own process while the run's session reads: each line is one append, and a line not yet
 * whole is skipped (it is read whole next time).
 */
export function createFileGuidance(
  paths: Pick<FileProjectPaths, 'guidance' | 'guidanceAcks'>,
): ProjectGuidance {
  async function list(): Promise<StoredGuidance[]> {
    const [entries, acks] = await Promise.all([
      readLines<OperatorGuidance>(paths.guidance),
      readLines<{ id: string } & NonNullable<StoredGuidance['acknowledged']>>(paths.guidanceAcks),
    ]);
    const byId = new Map(acks.map(({ id, ...ack }) => [id, ack]));
    return entries.slice(-GUIDANCE_KEPT).map((entry) => ({
      id: entry.id,
      at: entry.at,
      text: entry.text,
      acknowledged: byId.get(entry.id) ?? null,
    }));
  }
  return {
    async add(text) {
      const entry = newGuidance(text);
      await appendFile(paths.guidance, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
      return entry;
    },
    list,
    pending: () => pendingGuidance(list),
    async acknowledge(ids, by) {
      if (ids.length === 0) return;
      const at = Date.now();
      const lines = ids.map((id) =>
        JSON.stringify({ id, sessionId: by.sessionId, turn: by.turn, at }),
      );
      await appendFile(paths.guidanceAcks, `${lines.join('\n')}\n`, { mode: 0o600 });
    },
  };
}

async function readLines<T>(file: string): Promise<T[]> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  const lines: T[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      lines.push(JSON.parse(line) as T);
    } catch {
      // A line still being appended: whole on the next read.
    }
  }
  return lines;
}
