/** Every input the dashboard accepts, validated with zod before anything else sees it. */
import {
  PROJECT_STATUSES,
  formatIssues as formatIssueLines,
  projectIdSchema,
  projectInputSchema,
  type ProjectInput,
  type ProjectStatus,
} from '@baton/projects/schema';
import { z } from 'zod';
import { STREAM_ID_PATTERN } from './views.js';

export { projectIdSchema };

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
 * `GET /api/projects`: the query string of one page. Only turns text into the control API's query
 * (`pageProjects` applies the one rule for limits, sorts and cursors and names what is wrong).
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

/** `GET /api/projects/:id/sessions`: a window of summaries before an index. */
export const sessionsQuerySchema = z
  .object({
    before: z.coerce.number().int().min(0).optional(),
    limit: z.coerce.number().int().min(1).max(1_000).optional(),
  })
  .strict();

/** `GET /api/projects/:id/tokens`: the turns of the `limit` events before a stream id. */
export const tokensQuerySchema = z
  .object({
    before: streamIdSchema.optional(),
    limit: z.coerce.number().int().min(1).max(10_000).optional(),
  })
  .strict();

/** `POST /api/projects/:id/say`: empty and too long texts are refused by the control API's own rule. */
export const guidanceBodySchema = z.object({ text: z.string().max(100_000) }).strict();

/** `GET /api/projects/:id/search`: the text rule itself is the control API's (`searchTextProblem`). */
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

/** A new project: the one schema of `@baton/projects`, the same the control API applies. */
export const createProjectSchema = projectInputSchema;

/** zod issues as one line, each naming its key path. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return formatIssueLines(issues).join('; ');
}

/** Drops keys whose value is undefined (exactOptionalPropertyTypes). */
export function toProjectInput(value: z.infer<typeof createProjectSchema>): ProjectInput {
  return JSON.parse(JSON.stringify(value)) as ProjectInput;
}
