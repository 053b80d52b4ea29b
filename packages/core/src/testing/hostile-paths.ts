/**
 * Paths the memory tool's path policy must refuse, with why and a part of the refusal message.
 * Exported so other packages (stores, sessions) can run the same hostile cases through the real
 * handler instead of keeping a copy that drifts. Every one is refused by `parseMemoryPath` (and
 * so by every command) with a `MemoryToolError` of code `invalid_path` whose message starts with
 * `Error: ` and contains `messagePart`. Path and name length limits are not listed: they depend
 * on the configured limits.
 */
export interface HostileMemoryPath {
  /** What makes the path hostile, e.g. `encoded traversal, upper case`. */
  reason: string;
  /** The path exactly as a model could send it. */
  path: string;
  /** A part of the refusal message that names the rule. */
  messagePart: string;
}

/** Every hostile path the path policy's own tests check. */
export const HOSTILE_MEMORY_PATHS: readonly HostileMemoryPath[] = Object.freeze(
  [
    {
      reason: 'outside the root',
      path: '/etc/passwd',
      messagePart: 'outside the memory directory',
    },
    {
      reason: 'a sibling sharing the prefix',
      path: '/memoriesX/a',
      messagePart: 'outside the memory directory',
    },
    {
      reason: 'a sibling with an underscore',
      path: '/memories_backup/a',
      messagePart: 'outside the memory directory',
    },
    {
      reason: 'the prefix without a slash',
      path: '/memoriesX',
      messagePart: 'outside the memory directory',
    },
    { reason: 'relative', path: 'memories/a.md', messagePart: 'outside the memory directory' },
    { reason: 'empty', path: '', messagePart: 'empty' },
    { reason: 'dot-dot escaping', path: '/memories/../etc/passwd', messagePart: "'..' segment" },
    { reason: 'dot-dot staying inside', path: '/memories/a/../b.md', messagePart: "'..' segment" },
    { reason: 'dot-dot to the root', path: '/memories/x/..', messagePart: "'..' segment" },
    { reason: 'trailing dot-dot', path: '/memories/..', messagePart: "'..' segment" },
    { reason: 'backslash traversal', path: '/memories/..\\etc', messagePart: 'backslash' },
    { reason: 'backslash separator', path: '/memories\\a.md', messagePart: 'backslash' },
    { reason: 'NUL', path: '/memories/a\u0000.md', messagePart: 'control' },
    { reason: 'newline', path: '/memories/a\n.md', messagePart: 'control' },
    { reason: 'tab', path: '/memories/a\t.md', messagePart: 'control' },
    { reason: 'DEL', path: '/memories/a\u007f', messagePart: 'control' },
    { reason: 'C1 control', path: '/memories/a\u0085', messagePart: 'control' },
    { reason: 'bidi override', path: '/memories/\u202egnp.exe', messagePart: 'control' },
    { reason: 'zero-width space', path: '/memories/a\u200b.md', messagePart: 'control' },
    { reason: 'lone surrogate', path: '/memories/a\ud800.md', messagePart: 'control' },
    {
      reason: 'encoded traversal, lower case',
      path: '/memories/%2e%2e%2fetc',
      messagePart: 'percent-encoded',
    },
    {
      reason: 'encoded traversal, upper case',
      path: '/memories/%2E%2E%2Fetc',
      messagePart: 'percent-encoded',
    },
    {
      reason: 'encoded traversal, mixed case',
      path: '/memories/%2e%2E/etc',
      messagePart: 'percent-encoded',
    },
    { reason: 'encoded slash only', path: '/memories/..%2fetc', messagePart: 'percent-encoded' },
    { reason: 'encoded backslash', path: '/memories/..%5cetc', messagePart: 'percent-encoded' },
    {
      reason: 'double-encoded dot',
      path: '/memories/%252e%252e/etc',
      messagePart: 'percent-encoded',
    },
    {
      reason: 'double-encoded slash',
      path: '/memories/..%252fetc',
      messagePart: 'percent-encoded',
    },
    { reason: 'encoded NUL', path: '/memories/a%00.md', messagePart: 'percent-encoded' },
    {
      reason: 'overlong UTF-8 dot',
      path: '/memories/%c0%ae%c0%ae/etc',
      messagePart: 'percent-encoded',
    },
    {
      reason: 'overlong UTF-8 three bytes',
      path: '/memories/%e0%80%ae',
      messagePart: 'percent-encoded',
    },
    {
      reason: 'IIS %u encoding',
      path: '/memories/%u002e%u002e/etc',
      messagePart: 'percent-encoded',
    },
  ].map((entry) => Object.freeze(entry)),
);
