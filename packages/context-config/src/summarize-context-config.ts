import type { ResolvedContextConfig } from './types.js';

/**
 * One line naming what a resolved config sends, for `baton status`, `baton run` and the
 * dashboard: the preset, the context edits it turns on, and prompt caching with its prefix TTL,
 * e.g. `coding · edits clear_tool_uses · cache on (ttl 5m)` or `off · no edits · cache off`.
 */
export function summarizeContextConfig(config: ResolvedContextConfig): string {
  const edits = config.context_management?.edits ?? [];
  const names = edits.map((edit) => edit.type.replace(/_\d{8}$/, ''));
  const cache =
    config.promptCache === null ? 'cache off' : `cache on (ttl ${config.promptCache.prefixTtl})`;
  return `${config.preset} · ${names.length === 0 ? 'no edits' : `edits ${names.join(', ')}`} · ${cache}`;
}
