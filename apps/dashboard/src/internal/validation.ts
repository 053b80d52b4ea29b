/** Every input the dashboard accepts, validated with zod before anything else sees it. */
import { z } from 'zod';
import { PROJECT_STATUSES, type ProjectInput, type ProjectStatus } from '../control.js';
import { STREAM_ID_PATTERN } from './views.js';

// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/** Same rule as the worker: ids end up in Redis keys, job ids and memory namespaces. */
export const PROJECT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export const projectIdSchema = z
  .string()
  .regex(
    PROJECT_ID_PATTERN,
    'must be 1-64 letters, digits, "-" or "_", starting with a letter or digit',
  );

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

export const projectsQuerySchema = z
  .object({
    status: z
      .string()
      .max(200)
      .transform((value) => value.split(',').filter((part) => part !== ''))
      .pipe(z.array(statusSchema))
      .optional(),
    q: z.string().max(200).optional(),
  })
  .strict();

export const eventsQuerySchema = z
  .object({
    after: streamIdSchema.optional(),
    limit: z.coerce.number().int().min(1).max(1_000).optional(),
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

const positiveNumber = z.number().finite().positive().max(1_000_000);
const positiveInteger = z.number().int().positive().max(1_000_000_000);

export const createProjectSchema = z
  .object({
    id: projectIdSchema,
    goal: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(100_000, 'is longer than 100000 characters'),
    workspace: z
      .string()
      .max(4_096)
      .refine((value) => value.startsWith('/'), 'must be an absolute path')
      .refine((value) => !CONTROL_CHARACTERS.test(value), 'contains control characters')
      .optional(),
    model: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .regex(/^[A-Za-z0-9._:@/-]+$/, 'must be a model id')
      .optional(),
    contextPreset: z.enum(['coding', 'search-heavy', 'long-horizon', 'off']).optional(),
    budgets: z
      .object({
        maxUsd: positiveNumber.optional(),
        maxSessions: positiveInteger.optional(),
        maxTokens: positiveInteger.optional(),
        session: z
          .object({ maxTurns: positiveInteger.optional(), maxUsd: positiveNumber.optional() })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

/** zod issues as one line each, naming the key path. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map(
      (issue) =>
        `${issue.path.length > 0 ? issue.path.map(String).join('.') : 'input'}: ${issue.message}`,
    )
    .join('; ');
}

/** Drops keys whose value is undefined (exactOptionalPropertyTypes). */
export function toProjectInput(value: z.infer<typeof createProjectSchema>): ProjectInput {
  return JSON.parse(JSON.stringify(value)) as ProjectInput;
}
