import type { ContextConfigIssue } from '../errors.js';
import type { ContextConfigInput } from '../types.js';
import { toIssues } from './issues.js';
import { checkContradictions } from './resolve.js';
import { contextConfigInputSchema } from './schema.js';

/** Schema and cross-field checks for one layer; shared with `loadContextConfig`. */
export function validateContextInput(
  value: unknown,
  prefix: readonly PropertyKey[],
  source: string,
  options: { crossField: boolean } = { crossField: true },
): { input: ContextConfigInput; issues: ContextConfigIssue[] } {
  const parsed = contextConfigInputSchema.safeParse(value);
  if (!parsed.success) {
    return { input: {}, issues: toIssues(parsed.error.issues, prefix, source) };
  }
  // The schema mirrors ContextConfigInput; zod's optional fields also admit `undefined`, which
  // the merge treats exactly like an absent key.
  const input = parsed.data as ContextConfigInput;
  return { input, issues: options.crossField ? checkContradictions(input, prefix, source) : [] };
}
