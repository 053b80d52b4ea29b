/**
 * The routes that read a project's memory: the progress log, the checklist, the file tree, one
 * file, a file's kept versions and the diff between two of them. Registered on the JSON API by
 * `createApiRoutes` (api.ts) through its `ProjectRoute` (project-routes.ts).
 */
import { readProgressArchives, readProgressLog } from '@baton/session';
import {
  memoryDiffQuerySchema,
  memoryFileQuerySchema,
  toStorePath,
  toVirtualPath,
} from '@baton/projects/schema';
import type * as Browser from '../../public/js/api-types.js';
import type { DashboardControl, DashboardMemoryStore } from '../control.js';
import { ApiError } from './api-error.js';
import { diffLines } from './diff.js';
import { renderMarkdown } from './markdown.js';
import type { ProjectRoute } from './project-routes.js';
import { checklistView } from './views.js';

export interface MemoryRoutesOptions {
  control: DashboardControl;
  /** Largest memory file returned whole (bytes); bigger ones are cut. */
  maxFileBytes: number;
  /** Registers a `/projects/:id/...` read (id, query, project check). */
  route: ProjectRoute;
}

export function addMemoryRoutes(options: MemoryRoutesOptions): void {
  const { control, route } = options;

  async function readFile(memory: DashboardMemoryStore, storePath: string): Promise<string | null> {
    try {
      return await memory.read(storePath);
    } catch (error) {
      if ((error as { code?: unknown }).code === 'is_directory') {
        throw new ApiError(400, 'invalid_input', 'That path is a directory.');
      }
      throw error;
    }
  }

  route('/projects/:id/progress', {}, async ({ context, projectId }) => {
    const memory = await control.memoryStore(projectId);
    // The whole log: progress.md's archived entries (/memories/progress/) first, then its own.
    const [markdown, archives] = await Promise.all([
      readProgressLog(memory),
      readProgressArchives(memory),
    ]);
    return context.json({
      path: '/memories/progress.md',
      archives: archives.map((archive) => `/memories/${archive.storePath}`),
      exists: markdown !== null,
      markdown: markdown ?? '',
      html: markdown === null ? '' : renderMarkdown(markdown),
    } satisfies Browser.ProgressAnswer);
  });

  route('/projects/:id/checklist', {}, async ({ context, projectId }) => {
    const memory = await control.memoryStore(projectId);
    // Who flipped each feature comes from the project's flip hash (one entry per feature), never
    // from the session summaries, whose number grows with the project's age.
    const [content, flips] = await Promise.all([
      readFile(memory, 'features.json'),
      control.featureFlips(projectId),
    ]);
    return context.json(checklistView(content, flips) satisfies Browser.ChecklistView);
  });

  route('/projects/:id/memory', {}, async ({ context, projectId }) => {
    const memory = await control.memoryStore(projectId);
    const entries = await memory.list('', { depth: 32 });
    const usage = await memory.usage();
    return context.json({
      files: entries.map((entry) => ({
        path: toVirtualPath(entry.path),
        kind: entry.kind,
        size: entry.size,
        modifiedAt: entry.modifiedAt,
        depth: entry.depth,
      })),
      usage,
    } satisfies Browser.MemoryList);
  });

  route(
    '/projects/:id/memory/file',
    { query: memoryFileQuerySchema },
    async ({ context, projectId, query }) => {
      const memory = await control.memoryStore(projectId);
      const content = await readFile(memory, toStorePath(query.path));
      if (content === null)
        throw new ApiError(404, 'not_found', `No memory file at ${query.path}.`);
      const truncated = content.length > options.maxFileBytes;
      const shown = truncated ? content.slice(0, options.maxFileBytes) : content;
      return context.json({
        path: query.path,
        content: shown,
        truncated,
        html: query.path.toLowerCase().endsWith('.md') ? renderMarkdown(shown) : null,
      } satisfies Browser.MemoryFile);
    },
  );

  route(
    '/projects/:id/memory/history',
    { query: memoryFileQuerySchema },
    async ({ context, projectId, query }) => {
      const storePath = toStorePath(query.path);
      // One read of the file and its own history list (a few versions per file), never the
      // namespace's change feed: the cost does not grow with how often anything changed.
      const versions = await control.memoryHistory(projectId, storePath);
      // The changes that wrote the kept versions, oldest first.
      const changes = versions
        .map((version) => ({
          at: version.at,
          command: version.command,
          path: query.path,
          bytes: version.bytes,
          version: version.version,
          // eslint-disable-next-line no-restricted-syntax -- Browser.MemoryHistory (public/js) has `session?: string`
          ...(version.session === undefined ? {} : { session: version.session }),
        }))
        .reverse();
      return context.json({
        path: query.path,
        versions,
        changes,
      } satisfies Browser.MemoryHistory);
    },
  );

  route(
    '/projects/:id/memory/diff',
    { query: memoryDiffQuerySchema },
    async ({ context, projectId, query }) => {
      const memory = await control.memoryStore(projectId);
      const storePath = toStorePath(query.path);
      const before =
        query.from === undefined ? '' : await memory.readHistory(storePath, query.from);
      const after =
        query.to === undefined
          ? await readFile(memory, storePath)
          : await memory.readHistory(storePath, query.to);
      if (before === null || after === null) {
        throw new ApiError(404, 'not_found', `That version of ${query.path} is no longer kept.`);
      }
      return context.json({
        path: query.path,
        from: query.from ?? null,
        to: query.to ?? null,
        diff: diffLines(before, after),
      } satisfies Browser.MemoryDiff);
    },
  );
}
