import { z } from 'zod';
import { ProjectError } from './errors.js';
import { PROJECT_SORTS, type ProjectSort } from './keys.js';
import {
  PROJECT_STATUSES,
  formatIssues,
  type ProjectRecord,
  type ProjectStatus,
} from './project.js';

/** One page of projects: which ones, in which order, after which cursor. */
export interface ProjectPageQuery {
  /** Only projects in these statuses. Default: every status. */
  statuses?: readonly ProjectStatus[];
  /** Order by creation time, last status change or id. Default `created`. */
  sort?: ProjectSort;
  /** Default `desc` (newest first; for `id`, Z to A). */
  order?: 'asc' | 'desc';
  /** Keep projects whose id or goal contains this text (case-insensitive). Default: every one. */
  search?: string;
  /** Most projects returned. Default 50. */
  limit?: number;
  /** A previous page's `nextCursor`: continue strictly after it. Default: from the first. */
  cursor?: string | null;
}

/** Projects in one page when the caller does not say. */
export const PROJECT_PAGE_DEFAULT_LIMIT = 50;
/** Most projects in one page. */
export const PROJECT_PAGE_MAX_LIMIT = 500;
/** Longest search text. */
export const PROJECT_SEARCH_MAX_CHARACTERS = 200;

/**
 * A cursor is the index member of the last project shown: `<15-digit ms>:<id>` for the `created`
 * and `updated` orders, the id itself for `id`.
 */
const TIMED_CURSOR = /^\d{15}:[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const ID_CURSOR = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export const projectPageQuerySchema = z
  .object({
    statuses: z.array(z.enum(PROJECT_STATUSES as [ProjectStatus, ...ProjectStatus[]])).optional(),
    sort: z.enum(PROJECT_SORTS as [ProjectSort, ...ProjectSort[]]).optional(),
    order: z.enum(['asc', 'desc']).optional(),
    search: z
      .string()
      .max(
        PROJECT_SEARCH_MAX_CHARACTERS,
        `is longer than ${PROJECT_SEARCH_MAX_CHARACTERS} characters`,
      )
      .optional(),
    limit: z.number().int().min(1).max(PROJECT_PAGE_MAX_LIMIT).optional(),
    cursor: z.string().max(100).nullable().optional(),
  })
  .strict()
  .refine(
    (query) =>
      query.cursor === undefined ||
      query.cursor === null ||
      query.cursor === '' ||
      ((query.sort ?? 'created') === 'id' ? ID_CURSOR : TIMED_CURSOR).test(query.cursor),
    { message: 'is not a cursor of this sort order (pass a nextCursor back)', path: ['cursor'] },
  );

/**
 * The cursor that continues a page right after `project` in `sort` order: its index member
 * (`commands/includes/index.lua` `index_member`). A reader that shows only part of a page (a
 * byte bound on the answer) passes it on as that page's `nextCursor`.
 */
export function projectPageCursor(
  project: Pick<ProjectRecord, 'id' | 'createdAt' | 'statusAt'>,
  sort: ProjectSort = 'created',
): string {
  if (sort === 'id') return project.id;
  const ms = sort === 'updated' ? project.statusAt : project.createdAt;
  return `${String(Math.max(0, Math.trunc(ms))).padStart(15, '0')}:${project.id}`;
}

/** Validates a page query; throws `ProjectError('invalid_input')` naming every problem. */
export function parseProjectPageQuery(input: unknown): ProjectPageQuery {
  const parsed = projectPageQuerySchema.safeParse(input ?? {});
  if (!parsed.success) {
    throw new ProjectError(
      'invalid_input',
      `invalid project page query: ${formatIssues(parsed.error.issues).join('; ')}`,
    );
  }
  const { cursor, ...rest } = parsed.data;
  const query: ProjectPageQuery = JSON.parse(JSON.stringify(rest)) as ProjectPageQuery;
  if (cursor !== undefined && cursor !== null && cursor !== '') query.cursor = cursor;
  return query;
}
