import { describe, expect, it } from 'vitest';
import { HOSTILE_INPUTS, HOSTILE_MARKDOWN } from '../../test/fixtures/hostile.js';
import { renderMarkdown, safeUrl, sanitizeRenderedHtml } from './markdown.js';

function assertInert(html: string): void {
  // Only the allowlisted tags survive as tags; everything else is text.
  for (const match of html.matchAll(/<\/?([a-z][a-z0-9]*)/gi)) {
    expect(ALLOWED).toContain(match[1]?.toLowerCase());
  }
  // No attribute starting with "on" survives inside a real tag.
  expect(html).not.toMatch(/<[a-z][^>]*\son[a-z]+\s*=/i);
  // No href other than http(s), mailto or relative.
  // Text is escaped (no raw `<`), so `<a ` only opens a real tag.
  for (const match of html.matchAll(/<a\s[^>]*href="([^"]*)"/g)) {
    expect(match[1]).toMatch(/^(https?:|mailto:|\/|#|\?|[a-z0-9._-]+(\/|$))/i);
  }
}

const ALLOWED = [
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

describe('the hostile corpus', () => {
  it('has at least 50 inputs, each with its own marker', () => {
    expect(HOSTILE_INPUTS.length).toBeGreaterThanOrEqual(50);
    const markers = HOSTILE_INPUTS.map((input) => /__pwned ?(?:=|%3D) ?(\d+)/.exec(input)?.[1]);
    expect(new Set(markers).size).toBe(HOSTILE_INPUTS.length);
  });

  it.each(HOSTILE_INPUTS.map((input, index) => [index + 1, input]))(
    'input %i is inert through marked and sanitize-html, and through sanitize-html alone',
    (_index, input) => {
      assertInert(renderMarkdown(input as string));
      // The last layer must hold on its own: raw hostile HTML straight into the sanitiser.
      assertInert(sanitizeRenderedHtml(input as string));
    },
  );
});

describe('renderMarkdown renders untrusted progress logs inert', () => {
  it('escapes raw HTML, script tags and event-handler attributes', () => {
    const html = renderMarkdown(HOSTILE_MARKDOWN);
    assertInert(html);
    expect(html).toContain('&lt;script&gt;');
    expect(html).toContain('<h1>Session 1</h1>');
  });

  it('drops javascript: and data: URLs but keeps the link text', () => {
    const html = renderMarkdown(HOSTILE_MARKDOWN);
    expect(html).not.toMatch(/<a\s[^>]*href="[^"]*(javascript|data):/i);
    expect(html).toContain('click');
    expect(html).toContain(
      '<a href="https://example.com/docs" title="a title" rel="noopener noreferrer nofollow">fine</a>',
    );
  });

  it('keeps the Markdown subset a progress log uses', () => {
    const html = renderMarkdown(
      '## Next\n\n- **F2**: add `sum()`\n- [x] done\n\n```\nnpm test\n```',
    );
    expect(html).toContain('<h2>Next</h2>');
    expect(html).toContain('<strong>F2</strong>');
    expect(html).toContain('<code>sum()</code>');
    expect(html).toContain('<input checked disabled type="checkbox" />');
    expect(html).toContain('<pre><code>npm test');
  });
});

describe('safeUrl', () => {
  it('allows http, https, mailto and relative URLs only', () => {
    expect(safeUrl('https://a.example/x')).toBe('https://a.example/x');
    expect(safeUrl('mailto:a@b.c')).toBe('mailto:a@b.c');
    expect(safeUrl('/memories/progress.md')).toBe('/memories/progress.md');
    expect(safeUrl('#top')).toBe('#top');
    expect(safeUrl('javascript:alert(1)')).toBeNull();
    expect(safeUrl(' JAVASCRIPT:alert(1)')).toBeNull();
    expect(safeUrl('java\nscript:alert(1)')).toBeNull();
    expect(safeUrl('vbscript:x')).toBeNull();
    expect(safeUrl('data:text/html,x')).toBeNull();
    expect(safeUrl('&#106;avascript:alert(1)')).toBeNull();
    expect(safeUrl('javascript&colon;alert(1)')).toBeNull();
    expect(safeUrl('&#x6a;avascript&#58;alert(1)')).toBeNull();
    expect(safeUrl('/a?b=1&amp;c=2')).toBe('/a?b=1&amp;c=2');
  });
});

describe('sanitizeRenderedHtml', () => {
  it('escapes tags outside the allowlist and drops unknown attributes and URLs', () => {
    expect(sanitizeRenderedHtml('<p onclick="x()">a</p><svg onload="x()"></svg>')).toBe(
      '<p>a</p>&lt;svg&gt;&lt;/svg&gt;',
    );
    expect(sanitizeRenderedHtml('<a href="javascript:x()">a</a>')).toBe(
      '<a rel="noopener noreferrer nofollow">a</a>',
    );
    expect(sanitizeRenderedHtml('<input type="text" />')).toBe('');
    expect(sanitizeRenderedHtml('<code class="language-ts evil">x</code>')).toBe(
      '<code class="language-ts">x</code>',
    );
  });
});
