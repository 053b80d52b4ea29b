/**
 * The control API's inputs as they arrive in text (HTTP query strings and JSON bodies): one schema
 * per request, so the dashboard (through `@hono/zod-validator`) and any other front end accept
 * exactly the same values and name the same field when one is wrong.
 */
import { z } from 'zod';
import { ProjectError } from './errors.js';
import { PROJECT_STATUSES, formatIssues, isValidProjectId, type ProjectStatus } from './project.js';

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
    statuses: status,
    search: q === undefined || q.trim() === '' ? undefined : q,
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

/**
 * Parses one request of the control API with its schema: the value, or `invalid_input` with one
 * line naming `what` and every wrong field (`invalid session window: limit: must be ...`).
 */
export function parseRequest<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  what: string,
): z.output<Schema> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  // One failed rule can raise two issues (an integer too big is also unsafe): say it once.
  const problems = new Set(
    parsed.error.issues.map((issue) =>
      issue.path.length === 0 ? issue.message : formatIssues([issue]).join(''),
    ),
  );
  throw new ProjectError('invalid_input', `invalid ${what}: ${[...problems].join('; ')}`);
}

/** An integer option of the control API; a refusal says the range and what was given. */
function integer(min: number, max?: number) {
  const rule =
    max === undefined ? `must be an integer >= ${min}` : `must be an integer ${min}-${max}`;
  const error = (issue: { input?: unknown }) =>
    `${rule}, got ${typeof issue.input === 'string' ? JSON.stringify(issue.input) : String(issue.input)}`;
  const atLeast = z.number({ error }).int({ error }).min(min, { error });
  return max === undefined ? atLeast : atLeast.max(max, { error });
}

const abortSignalSchema = z.instanceof(AbortSignal);

/** `pageSessions`: the newest `limit` summaries before `beforeIndex`. */
export const sessionWindowRequestSchema = z.object({
  limit: integer(1, 1_000).default(50),
  beforeIndex: integer(0).optional(),
});

/** `projectChanges`: the change feed after `version`. */
export const projectChangesRequestSchema = z.object({
  version: integer(0),
  limit: integer(1).default(500),
});

/** `readEvents`: forwards after `fromId` (optionally blocking), or the `last` entries backwards. */
export const readEventsRequestSchema = z
  .object({
    fromId: streamIdSchema.optional(),
    last: integer(1).optional(),
    beforeId: streamIdSchema.optional(),
    count: integer(1).optional(),
    blockMs: integer(0).optional(),
  })
  .superRefine((options, context) => {
    if (
      options.last !== undefined &&
      (options.fromId !== undefined || options.blockMs !== undefined)
    ) {
      context.addIssue({
        code: 'custom',
        path: ['last'],
        message: 'reads backwards: give no fromId or blockMs',
      });
    }
    if (options.beforeId !== undefined && options.last === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['beforeId'],
        message: 'pages backwards: give last with it',
      });
    }
  });

/** `followEvents`: from a stream id (or `$`, new events only), in reads of `count`. */
export const followEventsRequestSchema = z.object({
  fromId: z.union([z.literal('$'), streamIdSchema]).optional(),
  count: integer(1).optional(),
  blockMs: integer(0).optional(),
  signal: abortSignalSchema.optional(),
});

/** `waitForEvents`: each project's cursor (a stream id), and how long to block. */
export const waitForEventsRequestSchema = z.object({
  cursors: z.record(z.string(), z.unknown()).superRefine((cursors, context) => {
    for (const [projectId, cursor] of Object.entries(cursors)) {
      if (!isValidProjectId(projectId)) {
        context.addIssue({
          code: 'custom',
          path: [projectId],
          message: `invalid project id ${JSON.stringify(projectId)}`,
        });
      } else if (typeof cursor !== 'string' || !STREAM_ID_PATTERN.test(cursor)) {
        context.addIssue({
          code: 'custom',
          path: [projectId],
          message: `invalid stream id ${JSON.stringify(cursor)}`,
        });
      }
    }
  }),
  blockMs: integer(0),
  count: integer(1).optional(),
  signal: abortSignalSchema.optional(),
});

/** `memoryHistory`: at most `limit` versions. */
export const memoryHistoryRequestSchema = z.object({ limit: integer(1).optional() });

/** `search`'s options (the text's schema is in control/session-requests.ts, beside `@baton/session`). */
export const searchOptionsRequestSchema = z.object({
  limit: integer(1).optional(),
  context: integer(0).optional(),
});
