import { appendFile, mkdir, readFile, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { SessionError } from './errors.js';
import {
  TRANSCRIPT_SESSIONS_KEPT,
  isTranscriptSessionId,
  summarizeTranscript,
  transcriptFromRecords,
  type Transcript,
  type TranscriptRecord,
  type TranscriptStore,
} from './transcript.js';

/** Options of `createFileTranscriptStore`. */
export interface FileTranscriptStoreOptions {
  /** The project's transcript directory (`baton run`: `<BATON_HOME>/projects/<id>/transcripts`). */
  dir: string;
  /** Transcripts kept; starting one more removes the oldest. Default `TRANSCRIPT_SESSIONS_KEPT`. */
  keep?: number;
}

const SUFFIX = '.jsonl';

/**
 * Transcripts as files: one JSON-lines file per session (`<sessionId>.jsonl`: a header line,
 * one line per message, an end line), appended as the session goes, so a process killed
 * mid-session leaves every line it had written. Files are private to the user (mode 0600).
 */
export function createFileTranscriptStore(options: FileTranscriptStoreOptions): TranscriptStore {
  const { dir } = options;
  const keep = options.keep ?? TRANSCRIPT_SESSIONS_KEPT;

  function file(sessionId: string): string {
    if (!isTranscriptSessionId(sessionId)) {
      throw new SessionError('invalid_options', `invalid session id ${JSON.stringify(sessionId)}`);
    }
    return path.join(dir, `${sessionId}${SUFFIX}`);
  }

  async function write(sessionId: string, records: readonly TranscriptRecord[]): Promise<void> {
    const lines = records.map((record) => `${JSON.stringify(record)}\n`).join('');
    await appendFile(file(sessionId), lines, { mode: 0o600 });
  }

  async function readAll(): Promise<Transcript[]> {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const transcripts: Transcript[] = [];
    for (const name of names) {
      if (!name.endsWith(SUFFIX)) continue;
      const transcript = await readTranscript(path.join(dir, name));
      if (transcript !== null) transcripts.push(transcript);
    }
    return transcripts.sort((a, b) => a.startedAt - b.startedAt);
  }

  return {
    async start(header) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const kept = await readAll();
      for (const old of kept.slice(0, Math.max(0, kept.length - keep + 1))) {
        await rm(file(old.sessionId), { force: true });
      }
      await write(header.sessionId, [{ type: 'header', ...header }]);
    },
    append: (sessionId, messages) =>
      write(
        sessionId,
        messages.map((message) => ({ type: 'message' as const, ...message })),
      ),
    end: (sessionId, end) => write(sessionId, [{ type: 'end', ...end }]),
    async list() {
      return (await readAll()).map(summarizeTranscript);
    },
    async read(sessionId) {
      if (!isTranscriptSessionId(sessionId)) return null;
      return readTranscript(file(sessionId));
    },
  };
}

async function readTranscript(file: string): Promise<Transcript | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  // A line cut by a crash mid-write does not parse and is skipped.
  return transcriptFromRecords(text.split('\n').filter((line) => line !== ''));
}
