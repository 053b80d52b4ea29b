/** One secret pattern: what it finds and what the match is replaced with. */
export interface SecretPattern {
  /** Short name, used in the replacement marker `[REDACTED:<name>]`. */
  name: string;
  /** Global regular expression. If it has a named group `secret`, only that group is replaced. */
  pattern: RegExp;
}

/**
 * The documented patterns (docs/sessions.md, "Secret redaction"). Order matters: specific
 * vendor formats run before the generic `key=value` rule so their marker names the kind.
 * Markers start with `[REDACTED` and no pattern matches a marker, so redaction is idempotent.
 */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  {
    name: 'private_key',
    pattern:
      /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|$)/g,
  },
  { name: 'anthropic_key', pattern: /\bsk-ant-[A-Za-z0-9_-]{16,}/g },
  { name: 'openai_key', pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g },
  { name: 'aws_access_key_id', pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b/g },
  {
    name: 'aws_secret_access_key',
    pattern:
      /\baws_?secret_?access_?key["']?\s*[:=]\s*["']?(?<secret>(?!\[REDACTED)[A-Za-z0-9/+=]{30,})/gi,
  },
  {
    name: 'github_token',
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})/g,
  },
  { name: 'slack_token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { name: 'google_api_key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  {
    name: 'bearer_token',
    pattern: /\b(?:Bearer|Token)\s+(?<secret>(?!\[REDACTED)[A-Za-z0-9._~+/=-]{16,})/g,
  },
  {
    name: 'url_credentials',
    pattern: /\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:(?<secret>(?!\[REDACTED)[^@\s/]+)@/gi,
  },
  {
    name: 'assigned_secret',
    pattern:
      /\b(?:password|passwd|pwd|secret|client_secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|private[_-]?key)["']?\s*[:=]\s*(?<secret>"(?!\[REDACTED)[^"\n]+"|'(?!\[REDACTED)[^'\n]+'|(?!\[REDACTED)[^\s"',;]+)/gi,
  },
];

/** The result of redacting a text. */
export interface RedactionResult {
  text: string;
  /** Pattern names that matched, one entry per match. */
  found: string[];
}

/** Replace every secret in `text` with `[REDACTED:<name>]`. */
export function redactSecrets(
  text: string,
  patterns: readonly SecretPattern[] = SECRET_PATTERNS,
): RedactionResult {
  const found: string[] = [];
  let current = text;
  for (const { name, pattern } of patterns) {
    const marker = `[REDACTED:${name}]`;
    current = current.replace(pattern, (...args: unknown[]) => {
      const match = args[0] as string;
      const last = args[args.length - 1];
      const groups =
        typeof last === 'object' && last !== null
          ? (last as Record<string, string | undefined>)
          : undefined;
      const secret = groups?.secret;
      found.push(name);
      if (secret === undefined) return marker;
      const quoted = /^["'].*["']$/s.test(secret);
      return (
        match.slice(0, match.lastIndexOf(secret)) +
        (quoted ? `${secret[0]}${marker}${secret[0]}` : marker) +
        match.slice(match.lastIndexOf(secret) + secret.length)
      );
    });
  }
  return { text: current, found };
}

/** True if `text` contains anything the patterns would redact. */
export function containsSecret(
  text: string,
  patterns: readonly SecretPattern[] = SECRET_PATTERNS,
): boolean {
  return redactSecrets(text, patterns).found.length > 0;
}
