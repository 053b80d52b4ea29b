import { describe, expect, it } from 'vitest';
import { HOSTILE_MARKDOWN } from '../../test/fixtures/hostile.js';
import { renderMarkdown, safeUrl, sanitizeRenderedHtml } from './markdown.js';

function assertInert(html: string): void {
  expect(html).not.toMatch(/<script/i);
  expect(html).not.toMatch(/<img/i);
  expect(html).not.toMatch(/<iframe/i);
  expect(html).not.toMatch(/<div/i);
  // No attribute starting with "on" survives inside a real tag.
  expect(html).not.toMatch(/<[a-z][^>]*\son[a-z]+\s*=/i);
  // No href other than http(s), mailto or relative.
  for (const match of html.matchAll(/href="([^"]*)"/g)) {
    expect(match[1]).toMatch(/^(https?:|mailto:|\/|#|\?|[a-z0-9._-]+(\/|$))/i);
  }
}

describe('renderMarkdown renders untrusted progress logs inert', () => {
  it('escapes raw HTML, script tags and event-handler attributes', () => {
    const html = renderMarkdown(HOSTILE_MARKDOWN);
    assertInert(html);
    expect(html).toContain('&lt;script&gt;');
    expect(html).toContain('<h1>Session 1</h1>');
  });

  it('drops javascript: and data: URLs but keeps the link text', () => {
    const html = renderMarkdown(HOSTILE_MARKDOWN);
    expect(html).not.toMatch(/href="[^"]*(javascript|data):/i);
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
    expect(html).toContain('<input checked="" disabled="" type="checkbox" />');
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
  });
});

describe('sanitizeRenderedHtml', () => {
  it('escapes tags outside the allowlist and drops unknown attributes', () => {
    expect(sanitizeRenderedHtml('<p onclick="x()">a</p><svg onload="x()"></svg>')).toBe(
      '<p>a</p>&lt;svg onload=&quot;x()&quot;&gt;&lt;/svg&gt;',
    );
    expect(sanitizeRenderedHtml('<a href="javascript:x()">a</a>')).toBe('<a>a</a>');
    expect(sanitizeRenderedHtml('<input type="text" />')).toBe(
      '&lt;input type=&quot;text&quot; /&gt;',
    );
  });
});
