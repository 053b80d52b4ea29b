/**
 * Markdown from agent memory is untrusted: a model (or whoever wrote into its workspace) controls
 * every byte of `progress.md`. We render it with `marked` on the server, with a renderer that never
 * emits raw HTML and never emits a link or image URL outside a small allowlist, then run the result
 * through sanitize-html (a maintained, parser-based sanitiser) with an allowlist of the tags and
 * attributes our renderer is known to produce. The page CSP (no inline scripts) is a third layer,
 * not the one we rely on.
 */
import { Marked, type Tokens } from 'marked';
import sanitizeHtml from 'sanitize-html';

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escape text for use in HTML element content and quoted attribute values. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character] ?? character);
}

/** Numeric character references and the named ones that spell a scheme (`&colon;`, `&Tab;`). */
function decodeCharacterReferences(raw: string): string {
  return raw.replace(
    /&#x([0-9a-f]+);?|&#(\d+);?|&(colon|tab|newline);/gi,
    (whole, hex: string | undefined, decimal: string | undefined, name: string | undefined) => {
      if (name !== undefined)
        return { colon: ':', tab: '\t', newline: '\n' }[name.toLowerCase()] ?? whole;
      const code = hex === undefined ? Number(decimal) : Number.parseInt(hex, 16);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '';
    },
  );
}

/**
 * A URL is allowed only if it is relative (path, query or fragment) or uses http, https or mailto.
 * CommonMark decodes character references in a link destination (`&#106;avascript:`), and browsers
 * ignore ASCII whitespace and control characters inside a scheme (`java\nscript:`), so the scheme
 * is read after both.
 */
export function safeUrl(raw: string): string | null {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what we strip
  const compact = decodeCharacterReferences(raw).replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
  if (compact === '') return null;
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(compact);
  if (scheme === null) {
    // `//host` is protocol-relative: it leaves the dashboard, but is still http(s), so allow it.
    return raw.trim();
  }
  const name = scheme[1]?.toLowerCase();
  if (name === 'http' || name === 'https' || name === 'mailto') return raw.trim();
  return null;
}

/** The tags our renderer emits for the Markdown subset a progress log uses. */
const ALLOWED_TAGS = [
  'a',
  'blockquote',
  'br',
  'code',
  'del',
  'em',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'input',
  'li',
  'ol',
  'p',
  'pre',
  'strong',
  'table',
  'tbody',
  'td',
  'th',
  'thead',
  'tr',
  'ul',
];

/** Attributes our renderer emits, per tag. Everything else is dropped. */
const ALLOWED_ATTRIBUTES: Record<string, string[]> = {
  a: ['href', 'title', 'rel'],
  code: ['class'],
  ol: ['start'],
  td: ['align'],
  th: ['align'],
  input: ['type', 'checked', 'disabled'],
};

const SANITIZE_OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: ALLOWED_TAGS,
  allowedAttributes: ALLOWED_ATTRIBUTES,
  // Unknown tags are shown as text, so a reader sees what the agent wrote.
  disallowedTagsMode: 'escape',
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: {},
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: true,
  allowedClasses: { code: [/^language-[\w-]+$/] },
  allowedStyles: {},
  allowVulnerableTags: false,
  parseStyleAttributes: false,
  // The only input our renderer emits is a GFM task-list checkbox; anything else is a forgery.
  exclusiveFilter: (frame) =>
    frame.tag === 'input' &&
    (frame.attribs['type'] !== 'checkbox' || frame.attribs['disabled'] === undefined),
  transformTags: {
    a: (tagName, attribs) => ({
      tagName,
      attribs: { ...attribs, rel: 'noopener noreferrer nofollow' },
    }),
  },
};

/**
 * The last layer: sanitize-html with the allowlist of tags and attributes our renderer produces.
 * It parses HTML as a browser does, so it holds whatever `marked` emits after an upgrade.
 */
export function sanitizeRenderedHtml(html: string): string {
  return sanitizeHtml(html, SANITIZE_OPTIONS);
}

const markdown = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    // Raw HTML blocks and inline tags are shown as text, never interpreted.
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(text);
    },
    link({ href, title, tokens }: Tokens.Link): string {
      const label = this.parser.parseInline(tokens);
      const url = safeUrl(href);
      if (url === null) return label;
      const titleAttribute = title ? ` title="${escapeHtml(title)}"` : '';
      return `<a href="${escapeHtml(url)}"${titleAttribute} rel="noopener noreferrer nofollow">${label}</a>`;
    },
    // Images would make the viewer's browser fetch attacker-chosen URLs: show them as links.
    image({ href, text }: Tokens.Image): string {
      const url = safeUrl(href);
      const label = escapeHtml(text || href);
      if (url === null) return label;
      return `<a href="${escapeHtml(url)}" rel="noopener noreferrer nofollow">[image: ${label}]</a>`;
    },
  },
});

/** Render untrusted Markdown to HTML that is safe to insert with `innerHTML`. */
export function renderMarkdown(source: string): string {
  const html = markdown.parse(source, { async: false });
  return sanitizeRenderedHtml(html);
}
