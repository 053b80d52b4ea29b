/**
 * Request validation wiring: every query, path parameter and JSON body goes through
 * `@hono/zod-validator` with a schema of `@baton/projects`, and a refusal is one line naming each
 * field that was wrong (`invalid query: limit: ...`).
 */
import { formatIssues, projectIdSchema } from '@baton/projects/schema';
import { zValidator } from '@hono/zod-validator';
import type { MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { ApiError } from './api-error.js';

/** Largest JSON body accepted. */
const MAX_BODY_CHARACTERS = 256 * 1024;

/** A `zValidator` hook: a failed parse becomes a 400 that names `what` and every wrong field. */
function refuseInvalid(what: string) {
  return (
    result: { success: true } | { success: false; error: { issues: readonly z.core.$ZodIssue[] } },
  ): void => {
    if (!result.success) {
      throw new ApiError(
        400,
        'invalid_input',
        `invalid ${what}: ${formatIssues(result.error.issues).join('; ')}`,
      );
    }
  };
}

/** The `:id` of every `/projects/:id...` route, by the one project-id rule. */
export const validProjectId = zValidator(
  'param',
  z.object({ id: projectIdSchema }),
  refuseInvalid('project id'),
);

/** `/projects/:id/checks/:feature`: the project id rule, and a checklist id of one short line. */
export const validFeatureParams = zValidator(
  'param',
  z.object({
    id: projectIdSchema,
    feature: z
      .string()
      .min(1, 'must not be empty')
      .max(200, 'is longer than 200 characters')
      .refine(
        (value) => [...value].every((character) => character >= ' ' && character !== '\u007f'),
        'must be one line',
      ),
  }),
  refuseInvalid('project or feature id'),
);

/** A route's query string, by one of `@baton/projects`' request schemas. */
export function validQuery<Schema extends z.ZodType>(schema: Schema) {
  return zValidator('query', schema, refuseInvalid('query'));
}

/** A route's JSON body (`what` names it in refusals), after the `jsonBody` checks. */
export function validJson<Schema extends z.ZodType>(schema: Schema, what: string) {
  return zValidator('json', schema, refuseInvalid(what));
}

/**
 * Runs before a `json` validator: the body must be sent as JSON (415), fit the limit (413) and
 * parse (400, an empty body too). The validator then reads the body Hono cached here.
 */
export const jsonBody: MiddlewareHandler = async (context, next) => {
  const type = context.req.header('content-type') ?? '';
  if (!type.toLowerCase().startsWith('application/json')) {
    throw new ApiError(415, 'unsupported_media_type', 'Send the body as application/json.');
  }
  const text = await context.req.text();
  if (text.length > MAX_BODY_CHARACTERS)
    throw new ApiError(413, 'too_large', 'Request body is larger than 256 KiB.');
  try {
    JSON.parse(text);
  } catch {
    throw new ApiError(400, 'invalid_input', 'Request body is not valid JSON.');
  }
  await next();
};
