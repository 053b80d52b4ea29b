/**
 * Reading what earlier versions stored, for the migrations: text that may be missing or not JSON.
 * One home for the rewrites of events and session summaries.
 */
import { readFile } from 'node:fs/promises';

/** `text` parsed as JSON, or null when it is not JSON. */
export function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** The model named by a project's stored context config (JSON text), or null. */
export function configModel(config: string | null | undefined): string | null {
  const model = (parseOrNull(config ?? '{}') as { model?: unknown } | null)?.model;
  return typeof model === 'string' ? model : null;
}

/** A file's text, or null when it does not exist. */
export async function readOrNull(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
