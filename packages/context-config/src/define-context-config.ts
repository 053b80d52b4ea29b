import { ContextConfigError } from './errors.js';
import { buildResolved } from './internal/resolve.js';
import { validateContextInput } from './internal/validate.js';
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
