/**
 * Same-origin for every request: what a page on another origin may not make the dashboard do.
 *
 * Browsers say where a request comes from: `Origin` on CORS requests (cross-origin `fetch`,
 * `EventSource`, every POST) and `Sec-Fetch-Site` on all of them. Without a token the dashboard
 * trusts the machine, so a page on any other origin (another local port, `http://evil.example`)
 * could otherwise read-trigger lists, diffs (a real `git fetch`) and event streams, even if it
 * cannot read the answers. Requests without these headers (curl, scripts, probes) pass: they are
 * not made by a page the user happened to visit.
 *
 * The one thing another site may do is link to the dashboard: a top-level navigation to an HTML
 * page (the UI shell or `/login`), which only serves a static file; everything the page then
 * does is same-origin. The shell is served to navigations only, never to a `fetch` or a frame.
 */
import type { Context } from 'hono';

export type OriginRefusal = 'foreign_origin' | 'cross_site' | 'not_a_navigation';

/** Host (with port) of an `Origin` header, or null when it names no host (`null`, garbage). */
function originHost(origin: string): string | null {
  if (origin === 'null') return null;
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return null;
  }
}

/** True for a browser's top-level navigation (typing the address, a link, a bookmark). */
function isTopLevelNavigation(context: Context): boolean {
  const mode = context.req.header('sec-fetch-mode');
  const destination = context.req.header('sec-fetch-dest');
  // Clients that send no fetch metadata (curl, older browsers) are taken at their word.
  return (
    context.req.method === 'GET' &&
    (mode === undefined || mode === 'navigate') &&
    (destination === undefined || destination === 'document')
  );
}

/**
 * Why this request is refused as coming from another origin, or null when it may go on.
 * `page`: the route serves an HTML page, which a cross-site top-level navigation may reach.
 */
export function crossOriginRefusal(context: Context, page: boolean): OriginRefusal | null {
  const navigation = isTopLevelNavigation(context);
  if (page && !navigation) return 'not_a_navigation';
  const origin = context.req.header('origin');
  // Compare hosts, not whole origins: behind a TLS-terminating proxy the scheme differs.
  const ownHost = (context.req.header('host') ?? '').toLowerCase();
  if (origin !== undefined && originHost(origin) !== ownHost) return 'foreign_origin';
  const site = context.req.header('sec-fetch-site');
  if ((site === 'cross-site' || site === 'same-site') && !(page && navigation)) return 'cross_site';
  return null;
}

/** The fixed message each refusal answers with (never anything from the request). */
export const ORIGIN_REFUSAL_MESSAGES: Record<OriginRefusal, string> = {
  foreign_origin: 'Requests from another origin are refused.',
  cross_site: 'Cross-site requests are refused.',
  not_a_navigation: 'This page is only served to a top-level navigation.',
};
