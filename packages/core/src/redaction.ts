/** The largest text the rules are proven linear on (and the most a file scan reads). */
export const MAX_REDACTED_TEXT_BYTES = 1_048_576;

/** One secret rule: what it finds and what the match is replaced with. */
export interface SecretPattern {
  /** Short name, used in the replacement marker `[REDACTED:<name>]`. */
  name: string;
  /** Global regular expression. If it has a named group `secret`, only that group is replaced. */
  pattern: RegExp;
  /**
   * `format`: a vendor's token format, specific enough that a match is almost surely a secret (the
   * workspace keeps files holding one out of commits). `context`: a secret recognised by the words
   * around it (`password=`, `Bearer `), redacted in text but too common in code to block a commit.
   */
  kind: 'format' | 'context';
}

/**
 * The one rules table (docs/sessions.md, "Secret redaction"), applied to memory writes, session
 * events, worker and dashboard logs and commit messages, and (its `format` rules) to the files a
 * checkpoint commits. Order matters: vendor formats run before the generic rules so their marker
 * names the kind. Markers start with `[REDACTED` and no rule matches a marker, so redaction is
 * idempotent.
 *
 * Every rule runs in time linear in its input (the worker runs them on the main thread, on text
 * the agent wrote): each has a literal or anchored start (a lookbehind where a start could repeat
 * inside one run of characters), and every quantifier that can fail after a long run is bounded.
 * `redaction-is-linear.test.ts` proves it with adversarial inputs of `MAX_REDACTED_TEXT_BYTES`.
 */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  {
    name: 'private_key',
    kind: 'format',
    // Also a Google service-account key's `private_key`, whose newlines are JSON `\n` escapes.
    pattern:
      /-----BEGIN (?:[A-Z0-9]{1,16} ){0,4}PRIVATE KEY-----[\s\S]*?(?:-----END (?:[A-Z0-9]{1,16} ){0,4}PRIVATE KEY-----|$)/g,
  },
  { name: 'anthropic_key', kind: 'format', pattern: /\bsk-ant-[A-Za-z0-9_-]{16,}/g },
  {
    name: 'openai_key',
    kind: 'format',
    pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g,
  },
  {
    name: 'stripe_key',
    kind: 'format',
    pattern: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g,
  },
  {
    name: 'aws_access_key_id',
    kind: 'format',
    pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b/g,
  },
  {
    name: 'aws_secret_access_key',
    kind: 'context',
    pattern:
      /\baws_?secret_?access_?key["']?\s{0,16}[:=]\s{0,16}["']?(?<secret>(?!\[REDACTED)[A-Za-z0-9/+=]{30,256})/gi,
  },
  {
    name: 'github_fine_grained_token',
    kind: 'format',
    pattern: /\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b/g,
  },
  {
    name: 'github_token',
    kind: 'format',
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})/g,
  },
  { name: 'gitlab_token', kind: 'format', pattern: /\bglpat-[A-Za-z0-9_-]{20,}/g },
  { name: 'npm_token', kind: 'format', pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { name: 'huggingface_token', kind: 'format', pattern: /\bhf_[A-Za-z0-9]{34,}\b/g },
  { name: 'slack_token', kind: 'format', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  {
    name: 'slack_webhook',
    kind: 'format',
    pattern: /https:\/\/hooks\.slack\.com\/(?:services|workflows)\/[A-Za-z0-9_/-]{20,}/g,
  },
  {
    name: 'sendgrid_key',
    kind: 'format',
    pattern: /\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b/g,
  },
  // Twilio API key SIDs (`SK` + 32 hex); the account SID (`AC...`) is an identifier, not a secret.
  { name: 'twilio_api_key', kind: 'format', pattern: /\bSK[0-9a-fA-F]{32}\b/g },
  {
    name: 'twilio_auth_token',
    kind: 'context',
    pattern: /\btwilio[_-]?auth[_-]?token["']?\s{0,16}[:=]\s{0,16}["']?(?<secret>[0-9a-f]{32})\b/gi,
  },
  {
    name: 'azure_storage_key',
    kind: 'format',
    pattern: /\bAccountKey=(?<secret>[A-Za-z0-9+/]{86}==)/g,
  },
  {
    name: 'azure_client_secret',
    kind: 'format',
    pattern: /(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/g,
  },
  { name: 'google_api_key', kind: 'format', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  {
    name: 'google_service_account_key_id',
    kind: 'format',
    pattern: /"private_key_id"\s{0,16}:\s{0,16}"(?<secret>[0-9a-f]{40})"/g,
  },
  {
    name: 'jwt',
    kind: 'format',
    // Anchored at the start of a run of token characters: a run of `eyJ-eyJ-...` has one
    // candidate start, not one per `eyJ` (each scanning the rest of the run: quadratic).
    pattern:
      /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,8192}\.eyJ[A-Za-z0-9_-]{8,65536}\.[A-Za-z0-9_-]{8,8192}/g,
  },
  {
    name: 'bearer_token',
    kind: 'context',
    pattern: /\b(?:Bearer|Token)\s{1,16}(?<secret>(?!\[REDACTED)[A-Za-z0-9._~+/=-]{16,8192})/g,
  },
  {
    name: 'http_basic_credentials',
    kind: 'context',
    // `Authorization: Basic <base64 of user:password>`, in a header, a curl -H or a JSON map.
    pattern:
      /\b(?:Proxy-)?Authorization\b[^\n]{0,40}?\bBasic\s{1,16}(?<secret>(?!\[REDACTED)[A-Za-z0-9+/]{4,4096}={0,2})/gi,
  },
  {
    name: 'url_credentials',
    kind: 'context',
    // The user part may itself be a marker left by a vendor rule (`https://[REDACTED:…]@host`).
    // Anchored at the start of the scheme (`a.a.a.` has one start, not one per letter) and
    // bounded: at most 32 + 256 + 256 characters are looked at from any start.
    pattern:
      /(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,31}:\/\/(?!\[REDACTED)[^/\s:@]{1,256}:(?<secret>(?!\[REDACTED)[^@\s/]{1,256})@/gi,
  },
  {
    name: 'assigned_secret',
    kind: 'context',
    pattern:
      /\b(?:password|passwd|pwd|secret|client_secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|private[_-]?key)["']?\s{0,16}[:=]\s{0,16}(?<secret>"(?!\[REDACTED)[^"\n]{1,1024}"|'(?!\[REDACTED)[^'\n]{1,1024}'|(?!\[REDACTED)[^\s"',;]{1,1024})/gi,
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

/**
 * `text` redacted, then cut to `max` characters (`…` marks the cut). Always in this order: a
 * key cut first loses the length its rule needs (`sk-proj-AbCd…`) and would come through.
 */
export function redactThenCut(
  text: string,
  max: number,
  patterns: readonly SecretPattern[] = SECRET_PATTERNS,
): string {
  const redacted = redactSecrets(text, patterns).text;
  return redacted.length > max ? `${redacted.slice(0, Math.max(0, max - 1))}…` : redacted;
}

/** True if `text` contains anything the patterns would redact. */
export function containsSecret(
  text: string,
  patterns: readonly SecretPattern[] = SECRET_PATTERNS,
): boolean {
  return redactSecrets(text, patterns).found.length > 0;
}

/**
 * `value` with every string in it (object values and array items, at any depth) redacted: for
 * events and log records, whose text fields can carry what the model or a command printed.
 */
export function redactValue<T>(value: T, patterns: readonly SecretPattern[] = SECRET_PATTERNS): T {
  return redactAny(value, patterns, 0) as T;
}

function redactAny(value: unknown, patterns: readonly SecretPattern[], depth: number): unknown {
  if (typeof value === 'string') {
    const result = redactSecrets(value, patterns);
    return result.found.length === 0 ? value : result.text;
  }
  // Deeper than any event or log record we write: returned as is rather than walked forever.
  if (depth > 20 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => redactAny(item, patterns, depth + 1));
  if (value instanceof Error) return value;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = redactAny(item, patterns, depth + 1);
  return copy;
}

/**
 * An error as plain data for a log line: type, message, code, stack and the `cause` chain (to a
 * bounded depth), every string redacted. A thrown non-Error is described by its string form.
 */
export function serializeError(error: unknown, depth = 0): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error, message: redactValue(String(error)) };
  const record: Record<string, unknown> = {
    type: error.name,
    message: error.message,
    stack: error.stack,
  };
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') record.code = code;
  if (error.cause !== undefined && depth < 8) record.cause = serializeError(error.cause, depth + 1);
  return redactValue(record);
}
