import { ContextConfigError } from './errors.js';
import { buildResolved, checkContradictions } from './internal/resolve.js';
import { toIssues } from './internal/issues.js';
import { contextConfigInputSchema } from './internal/schema.js';
import type { ContextConfigInput, ResolvedContextConfig } from './types.js';

/**
 * Validates a context config and turns it into what the Messages API expects: the
 * `context_management` edits (clear_thinking first, defaults written out, the memory tool
 * excluded from clearing) and the beta names they need.
 *
 * Throws one `ContextConfigError` (code `invalid_config`) listing every problem with its key path.
 * `input` is typed, but checked at runtime too: it often comes from JSON or a CLI.
 */
export function defineContextConfig(input: ContextConfigInput = {}): ResolvedContextConfig {
  const validated = validateContextInput(input, [], 'input');
  if (validated.issues.length > 0) {
    throw new ContextConfigError('invalid_config', validated.issues);
  }
  return buildResolved(validated.input);
}

/** Schema and cross-field checks for one layer; shared with `loadContextConfig`. */
export function validateContextInput(
  value: unknown,
  prefix: readonly PropertyKey[],
  source: string,
  options: { crossField: boolean } = { crossField: true },
): { input: ContextConfigInput; issues: ReturnType<typeof toIssues> } {
  const parsed = contextConfigInputSchema.safeParse(value);
  if (!parsed.success) {
    return { input: {}, issues: toIssues(parsed.error.issues, prefix, source) };
  }
  // The schema mirrors ContextConfigInput; zod's optional fields also admit `undefined`, which
  // the merge treats exactly like an absent key.
  const input = parsed.data as ContextConfigInput;
  return { input, issues: options.crossField ? checkContradictions(input, prefix, source) : [] };
}
