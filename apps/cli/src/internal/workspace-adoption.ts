import path from 'node:path';
import {
  WorkspaceError,
  checkWorkspaceDir,
  isForeignNonEmptyDirectory,
  previewAdoption,
  type AdoptionPreview,
} from '@baton/workspace';
import { CliError } from '../errors.js';
import { formatFileSize } from './format.js';
import { terminalText } from './terminal-text.js';

/** At most this many names per list in the preview; the rest is counted. */
const NAMES_SHOWN = 8;

function names(list: readonly string[]): string {
  const shown = list.slice(0, NAMES_SHOWN).map((name) => terminalText(name, { oneLine: true }));
  return list.length > NAMES_SHOWN
    ? `${shown.join(', ')} and ${list.length - NAMES_SHOWN} more`
    : shown.join(', ');
}

/** What adopting a directory will do, in lines a user reads before anything is written. */
function formatAdoptionPreview(preview: AdoptionPreview, adopting: boolean): string {
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
  const lines = [
    `${adopting ? 'Adopting' : 'Adopting would take'} ${terminalText(preview.dir, { oneLine: true })}: nothing in it is ever deleted.`,
    `  committed and pushed as the first checkpoint: ${plural(preview.committed.length, 'file')}${preview.committed.length === 0 ? '' : ` (${names(preview.committed)})`}`,
  ];
  if (preview.secrets.length > 0) {
    lines.push(
      `  kept, never committed (look like secrets): ${plural(preview.secrets.length, 'file')} (${names(preview.secrets)})`,
    );
  }
  if (preview.tooLarge.length > 0) {
    lines.push(
      `  kept, never committed (over ${formatFileSize(preview.maxFileBytes)}): ${plural(preview.tooLarge.length, 'file')} (${names(preview.tooLarge.map((file) => `${file.path} ${formatFileSize(file.bytes)}`))})`,
    );
  }
  if (preview.ignored.length > 0) {
    lines.push(
      `  kept, never committed (.gitignore): ${plural(preview.ignored.length, 'path')} (${names(preview.ignored)})`,
    );
  }
  if (preview.special.length > 0) {
    lines.push(
      `  kept, never committed (git cannot store them): ${plural(preview.special.length, 'file')} (${names(preview.special.map((file) => `${file.path} ${file.kind}`))})`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `--workspace DIR` of a new project (`baton run`, `baton enqueue`): refused when it is not a
 * directory Baton may use; a directory already holding files is shown as adopting it would
 * treat it, and refused unless `--adopt`. The preview goes to `out` before anything is created.
 */
export async function checkNewWorkspace(
  workspace: string | undefined,
  options: { adopt: boolean; maxFileBytes?: number | undefined; out: NodeJS.WritableStream },
): Promise<void> {
  if (workspace === undefined) return;
  const dir = path.resolve(workspace);
  try {
    // A file or a checkout of its own is refused before anything is read in it.
    await checkWorkspaceDir(dir, { adopt: true });
    if (!(await isForeignNonEmptyDirectory(dir))) return;
    const preview = await previewAdoption(dir, { maxFileBytes: options.maxFileBytes });
    options.out.write(formatAdoptionPreview(preview, options.adopt));
    if (!options.adopt) await checkWorkspaceDir(dir);
  } catch (error) {
    if (error instanceof WorkspaceError) throw new CliError('usage', error.message);
    throw error;
  }
}
