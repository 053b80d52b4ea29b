/**
 * The request schemas whose rules live in `@baton/session` (a transcript's session id, a search
 * text). They stay out of `requests.ts` so `@baton/projects/schema` loads no session module.
 */
import { z } from 'zod';
import { isTranscriptSessionId, searchTextProblem } from '@baton/session';

/** A kept transcript's session id (`@baton/session`'s rule). */
export const transcriptSessionIdSchema = z.string().refine(isTranscriptSessionId, {
  error: (issue) =>
    `must be up to 128 letters, digits, ".", "_" or "-", got ${JSON.stringify(issue.input)}`,
});

/** A search text, trimmed (`@baton/session`'s rule: not empty, not too long). */
export const searchTextSchema = z.string().transform((text, context) => {
  const problem = searchTextProblem(text);
  if (problem !== null) context.addIssue({ code: 'custom', message: problem });
  return text.trim();
});
