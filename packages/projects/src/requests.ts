/**
 * The control API's inputs as they arrive in text (HTTP query strings and JSON bodies): one schema
 * per request, so the dashboard (through `@hono/zod-validator`) and any other front end accept
 * exactly the same values and name the same field when one is wrong.
 */
import { z } from 'zod';
import { PROJECT_STATUSES, type ProjectStatus } from './project.js';

/** Redis stream ids (`<ms>-<seq>`), as `EventEntry.id` carries them. */
export const STREAM_ID_PATTERN = /^\d{1,20}-\d{1,20}$/;

// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

export const streamIdSchema = z
  .string()
  .regex(STREAM_ID_PATTERN, 'must be a stream id like 1700000000000-0');

/** A virtual memory path as the model sees it: `/memories` or below, no dot segments. */
export const memoryPathSchema = z
  .string()
  .max(1_024, 'is longer than 1024 characters')
  .refine(
    (value) => value === '/memories' || value.startsWith('/memories/'),
    'must start with /memories',
  )
  .refine(
    (value) => !CONTROL_CHARACTERS.test(value) && !value.includes('\\'),
    'contains control characters or backslashes',
  )
  .refine(
    (value) =>
      value
        .split('/')
        .every(
          (segment, index) =>
            index === 0 || (segment !== '' && segment !== '.' && segment !== '..'),
        ),
    'has empty, "." or ".." segments',
  );

/** `/memories/notes/a.md` -> `notes/a.md` (the store's path); `/memories` -> ''. */
export function toStorePath(virtualPath: string): string {
  return virtualPath === '/memories' ? '' : virtualPath.slice('/memories/'.length);
}

/** `notes/a.md` -> `/memories/notes/a.md`. */
export function toVirtualPath(storePath: string): string {
  return storePath === '' ? '/memories' : `/memories/${storePath}`;
}

const statusSchema = z.enum(PROJECT_STATUSES as [ProjectStatus, ...ProjectStatus[]]);

/**
 * One page of projects (`pageProjects`) as a query string. Only turns text into the page query:
 * `parseProjectPageQuery` applies the one rule for limits, sorts and cursors.
 */
export const projectsQuerySchema = z
  .object({
    status: z
      .string()
      .max(200)
      .transform((value) => value.split(',').filter((part) => part !== ''))
      .pipe(z.array(statusSchema))
      .optional(),
    q: z.string().max(1_000).optional(),
    sort: z.string().max(20).optional(),
    order: z.string().max(20).optional(),
    limit: z.coerce.number().optional(),
    cursor: z.string().max(200).optional(),
  })
  .strict()
  .transform(({ status, q, ...rest }) => ({
    ...rest,
    ...(status === undefined ? {} : { statuses: status }),
    ...(q === undefined || q.trim() === '' ? {} : { search: q }),
  }));

/** A window of a project's events (`readEvents`): after an id, before one, or the newest. */
export const eventsQuerySchema = z
  .object({
    after: streamIdSchema.optional(),
    /** The events just before this id (to page backwards from the oldest one shown). */
    before: streamIdSchema.optional(),
    limit: z.coerce.number().int().min(1).max(1_000).optional(),
  })
  .strict()
  .refine((query) => query.after === undefined || query.before === undefined, {
    message: 'give after or before, not both',
    path: ['before'],
  });

/** A window of session summaries (`pageSessions`) before an index. */
export const sessionsQuerySchema = z
  .object({
    before: z.coerce.number().int().min(0).optional(),
    limit: z.coerce.number().int().min(1).max(1_000).optional(),
  })
  .strict();

/** The turns of the `limit` events before a stream id (the token chart). */
export const tokensQuerySchema = z
  .object({
    before: streamIdSchema.optional(),
    limit: z.coerce.number().int().min(1).max(10_000).optional(),
  })
  .strict();

/** Guidance (`say`): empty and too long texts are refused by `parseGuidanceText` itself. */
export const guidanceBodySchema = z.object({ text: z.string().max(100_000) }).strict();

/** A search (`search`): the text rule itself is `searchTextProblem`'s. */
export const searchQuerySchema = z
  .object({
    q: z.string().max(1_000),
    limit: z.coerce.number().int().min(1).max(500).optional(),
  })
  .strict();

export const memoryFileQuerySchema = z.object({ path: memoryPathSchema }).strict();

/** Version ids of the Redis store's history (`<epoch>:<sequence>`, or plain digits). */
const versionSchema = z
  .string()
  .regex(/^\d{1,20}(:\d{1,20})?$/, 'must be a version id from the history');

export const memoryDiffQuerySchema = z
  .object({
    path: memoryPathSchema,
    /** Older version; absent = the empty file (the diff of a create). */
    from: versionSchema.optional(),
    /** Newer version; absent = the current content. */
    to: versionSchema.optional(),
  })
  .strict();
