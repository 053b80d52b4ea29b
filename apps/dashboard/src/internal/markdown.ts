/**
 * Markdown from agent memory is untrusted: a model (or whoever wrote into its workspace) controls
 * every byte of `progress.md`. We render it with `marked` on the server, with a renderer that never
 * emits raw HTML and never emits a link or image URL outside a small allowlist, then run the result
 * through an allowlist pass over the tags and attributes our renderer is known to produce. The page
 * CSP (no inline scripts) is a third layer, not the one we rely on.
 */
import { Marked, type Tokens } from 'marked';

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escape text for use in HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character] ?? character);
}

/**
 * A URL is allowed only if it is relative (path, query or fragment) or uses http, https or mailto.
 * Browsers ignore ASCII whitespace and control characters inside a scheme (`java\nscript:`), so
 * those are removed before the scheme is read; entities were already decoded by marked.
 */
export function safeUrl(raw: string): string | null {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what we strip
  const compact = raw.replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
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

const ALLOWED_TAGS = new Set([
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
]);

/** Attributes our renderer emits, per tag. Everything else is dropped. */
const ALLOWED_ATTRIBUTES: Record<string, Set<string>> = {
  a: new Set(['href', 'title', 'rel']),
  code: new Set(['class']),
  ol: new Set(['start']),
  td: new Set(['align']),
  th: new Set(['align']),
  input: new Set(['type', 'checked', 'disabled']),
};

const ATTRIBUTE_PATTERN = /([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:\s*=\s*"([^"]*)")?/g;

function filterTag(tag: string, closing: boolean, attributes: string): string | null {
  const name = tag.toLowerCase();
  if (!ALLOWED_TAGS.has(name)) return null;
  if (closing) return `</${name}>`;
  const allowed = ALLOWED_ATTRIBUTES[name];
  const kept: string[] = [];
  if (allowed !== undefined) {
    for (const match of attributes.matchAll(ATTRIBUTE_PATTERN)) {
      const attribute = match[1]?.toLowerCase();
      if (attribute === undefined || !allowed.has(attribute)) continue;
      const value = match[2];
      if (name === 'input' && attribute === 'type' && value !== 'checkbox') return null;
      if (attribute === 'href') {
        // Attribute values are still entity-encoded here; decode the few marked produces first.
        const decoded = (value ?? '')
          .replace(/&quot;/g, '"')
          .replace(/&#39;/g, "'")
          .replace(/&lt;/g, '<')
          .replace(/&gt;/g, '>')
          .replace(/&amp;/g, '&');
        if (/&#/.test(decoded) || safeUrl(decoded) === null) continue;
      }
      kept.push(value === undefined ? attribute : `${attribute}="${value}"`);
    }
  }
  const selfClosing = name === 'br' || name === 'hr' || name === 'input';
  return `<${name}${kept.length > 0 ? ` ${kept.join(' ')}` : ''}${selfClosing ? ' /' : ''}>`;
}

/**
 * Allowlist pass over HTML produced by our renderer: unknown tags are escaped (so they show as
 * text), unknown attributes are dropped. Text between tags is left as is: marked escapes it.
 */
export function sanitizeRenderedHtml(html: string): string {
  return html.replace(
    /<(\/?)([a-zA-Z][a-zA-Z0-9]*)((?:\s[^<>]*)?)\/?>|[<>]/g,
    (whole, slash: string | undefined, tag: string | undefined, attributes: string | undefined) => {
      if (tag === undefined) return escapeHtml(whole);
      const filtered = filterTag(tag, slash === '/', attributes ?? '');
      return filtered ?? escapeHtml(whole);
    },
  );
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
