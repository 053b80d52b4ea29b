// Text the model wrote (commands, file contents, messages, diffs) reaches the operator's
// terminal through `baton logs`, `baton run`, `baton transcript`, `baton search`, `baton status`
// and `baton diff`. A terminal acts on control characters: an escape sequence could clear the
// screen, rewrite earlier lines, set the window title, write the clipboard (OSC 52) or hide a
// link; bidirectional overrides make text read differently from what it is. Each such character
// is shown as a visible `\u{..}` instead.

/** C0 controls except tab and newline, DEL, C1 controls, bidirectional overrides and isolates. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu;
/** The same, and newline too: for text that must stay on its one line. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE_ON_ONE_LINE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu;

function visible(character: string): string {
  return `\\u{${(character.codePointAt(0) ?? 0).toString(16)}}`;
}

/** `text` with every character a terminal would act on shown as `\u{..}`; tabs stay. */
export function terminalText(text: string, options: { oneLine?: boolean } = {}): string {
  return text.replace(options.oneLine === true ? UNSAFE_ON_ONE_LINE : UNSAFE, visible);
}

/**
 * The message of a `baton: ...` error line: one line whatever it quotes. A message's own lines
 * (a tool's stderr, a remote's refusal, a progress line ended by a lone carriage return) are
 * joined with `; `; every other character a terminal acts on is shown as `\u{..}`.
 */
export function errorLine(message: string): string {
  return terminalText(message.trim().replace(/[ \t]*(?:\r\n|\r|\n)\s*/gu, '; '), { oneLine: true });
}

/** A copy of `value` whose strings, at any depth, are `terminalText(..., { oneLine: true })`. */
export function terminalSafe<T>(value: T): T {
  if (typeof value === 'string') return terminalText(value, { oneLine: true }) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => terminalSafe(item)) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, terminalSafe(item)]),
    ) as T;
  }
  return value;
}

/** What a command that prints content as it is (`memory cat`, `diff`) writes: raw into a pipe. */
export function contentForOutput(
  text: string,
  stream: NodeJS.WriteStream = process.stdout,
): string {
  return stream.isTTY === true ? terminalText(text) : text;
}

/** DEL, C1 controls and the bidirectional characters, which `JSON.stringify` leaves as they are. */
const UNESCAPED_BY_JSON = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu;

/**
 * `JSON.stringify(value, null, indent)` for stdout: JSON escapes C0 controls itself; the rest of
 * what a terminal acts on is written as `\uXXXX` too, which parses back to the same value.
 */
export function outputJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(
    UNESCAPED_BY_JSON,
    (character) => `\\u${(character.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`,
  );
}
