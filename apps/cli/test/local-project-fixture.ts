import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Writes a `baton run` project (project.json + memories/) under `home`, as run.ts lays it out. */
export async function createLocalProject(
  home: string,
  id: string,
  memories: Record<string, string> = {},
): Promise<string> {
  const directory = path.join(home, 'projects', id);
  await mkdir(path.join(directory, 'memories'), { recursive: true });
  await writeFile(
    path.join(directory, 'project.json'),
    JSON.stringify({
      id,
      goal: '- one',
      workspace: path.join(directory, 'workspace'),
      createdAt: new Date().toISOString(),
      sessions: 1,
      running: false,
      lastOutcome: 'completed',
    }),
  );
  for (const [name, content] of Object.entries(memories)) {
    const file = path.join(directory, 'memories', name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  }
  return directory;
}
