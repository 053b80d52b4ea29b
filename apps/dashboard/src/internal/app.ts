/** Wires the Hono app: security headers, auth, login, static UI, the JSON/SSE API and Bull Board. */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { deleteCookie, setCookie } from 'hono/cookie';
import type { Asset } from './assets.js';
import { createApiRoutes, controlErrorToApi, ApiError, type ApiOptions } from './api.js';
import { SESSION_COOKIE, SESSION_MAX_AGE_SECONDS, type AuthPolicy } from './auth.js';
import { ORIGIN_REFUSAL_MESSAGES, crossOriginRefusal } from './request-origin.js';

export interface AppOptions extends ApiOptions {
  auth: AuthPolicy;
  assets: Map<string, Asset>;
  /** A Hono sub-app serving Bull Board, mounted at `/queues`, or undefined when no queue was given. */
  queueBoard: Hono | undefined;
  /** `read-only`: every request to the board that is not a GET is refused here as well. */
  queueUi: 'read-only' | 'full' | 'off';
  /** Whether the login cookie gets the `Secure` flag (set when served over https). */
  secureCookie: boolean;
  /** Whether Redis answers (`/readyz`). */
  redisReady: () => Promise<boolean>;
}

const APP_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Bull Board's page uses inline styles and a `<base>` tag; scripts stay same-origin only. */
const QUEUE_BOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "base-uri 'self'",
  "frame-ancestors 'none'",
].join('; ');

function setSecurityHeaders(context: Context): void {
  const path = context.req.path;
  context.header('Content-Security-Policy', path.startsWith('/queues') ? QUEUE_BOARD_CSP : APP_CSP);
  context.header('X-Content-Type-Options', 'nosniff');
  context.header('X-Frame-Options', 'DENY');
  context.header('Referrer-Policy', 'no-referrer');
  context.header('Cross-Origin-Opener-Policy', 'same-origin');
  context.header('Cross-Origin-Resource-Policy', 'same-origin');
  context.header('Permissions-Policy', 'camera=(), microphone=(), geolocation=()');
  if (!context.res.headers.has('Cache-Control')) context.header('Cache-Control', 'no-store');
}

function serveAsset(context: Context, asset: Asset | undefined): Response {
  if (asset === undefined)
    return context.json({ error: { code: 'not_found', message: 'Not found.' } }, 404);
  return context.body(asset.body as Uint8Array<ArrayBuffer>, 200, {
    'Content-Type': asset.contentType,
  });
}

/** The HTML pages: the UI shell's routes and the login form. */
function isPagePath(path: string): boolean {
  return (
    path === '/' || path === '/new' || path === '/login' || /^\/projects\/[^/]+(\/.*)?$/.test(path)
  );
}

function wantsHtml(context: Context): boolean {
  return (context.req.header('accept') ?? '').includes('text/html');
}

export function createApp(options: AppOptions): Hono {
  const { auth, assets } = options;
  const app = new Hono();

  app.onError((error, context) => {
    const mapped = controlErrorToApi(error);
    if (mapped !== null) {
      return context.json({ error: { code: mapped.code, message: mapped.message } }, mapped.status);
    }
    options.onError(error);
    return context.json({ error: { code: 'internal', message: 'Internal error.' } }, 500);
  });

  app.notFound((context) =>
    context.json({ error: { code: 'not_found', message: 'Not found.' } }, 404),
  );

  app.use('*', options.telemetry.middleware);

  app.use('*', async (context, next) => {
    await next();
    setSecurityHeaders(context);
  });

  // Before anything else, probes included: a page on another origin makes the dashboard do
  // nothing at all (see request-origin.ts).
  app.use('*', async (context, next) => {
    const refusal = crossOriginRefusal(
      context,
      context.req.method === 'GET' && isPagePath(context.req.path),
    );
    if (refusal !== null) {
      return context.json(
        { error: { code: 'forbidden', message: ORIGIN_REFUSAL_MESSAGES[refusal] } },
        403,
      );
    }
    await next();
  });

  // No request of ours needs more; this also caps the unauthenticated login form.
  app.use(
    '*',
    bodyLimit({
      maxSize: 256 * 1024,
      onError: (context) =>
        context.json(
          { error: { code: 'too_large', message: 'Request body is larger than 256 KiB.' } },
          413,
        ),
    }),
  );

  // Probes and the login page work without a session. Liveness never depends on Redis (a probe
  // restarting dashboards would not bring Redis back); readiness does.
  app.get('/livez', (context) => context.json({ status: 'ok' }));
  const readiness = async (context: Context) =>
    (await options.redisReady())
      ? context.json({ status: 'ok' })
      : context.json({ status: 'unavailable', message: 'Redis is unreachable.' }, 503);
  app.get('/readyz', readiness);
  // The older name, kept for probes that use it.
  app.get('/healthz', readiness);
  app.get('/login', (context) => {
    const page = assets.get('login.html');
    if (page === undefined || context.req.query('failed') === undefined)
      return serveAsset(context, page);
    // A fixed message, never anything from the request.
    const html = new TextDecoder()
      .decode(page.body)
      .replace('<!--status-->', '<p class="error" role="alert">That token is not correct.</p>');
    return context.html(html);
  });
  // What the login page itself needs.
  app.get('/assets/style.css', (context) => serveAsset(context, assets.get('style.css')));
  app.get('/assets/favicon.svg', (context) => serveAsset(context, assets.get('favicon.svg')));

  app.post('/login', async (context) => {
    const sameOrigin = auth.checkSameOrigin(context, 'cookie');
    if (!sameOrigin.ok) return context.text(sameOrigin.message, sameOrigin.status);
    if (!auth.required) return context.redirect('/', 303);
    const type = context.req.header('content-type') ?? '';
    let candidate: unknown;
    if (
      type.startsWith('application/x-www-form-urlencoded') ||
      type.startsWith('multipart/form-data')
    ) {
      candidate = (await context.req.parseBody())['token'];
    } else if (type.startsWith('application/json')) {
      candidate = ((await context.req.json().catch(() => ({}))) as { token?: unknown }).token;
    }
    const login = await auth.login(context, candidate);
    if (!login.ok) {
      if (login.status === 429) {
        context.header('Retry-After', String(login.retryAfterSeconds));
        return context.text(login.message, 429);
      }
      return context.redirect('/login?failed=1', 303);
    }
    setCookie(context, SESSION_COOKIE, login.sessionId, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
      maxAge: SESSION_MAX_AGE_SECONDS,
      secure: options.secureCookie,
    });
    return context.redirect('/', 303);
  });

  app.post('/logout', async (context) => {
    const sameOrigin = auth.checkSameOrigin(context, 'cookie');
    if (!sameOrigin.ok) return context.text(sameOrigin.message, sameOrigin.status);
    // Revoked server-side: a copy of the cookie stops working too.
    await auth.logout(context);
    deleteCookie(context, SESSION_COOKIE, { path: '/' });
    return context.redirect('/login', 303);
  });

  // Everything below needs a session; state changes also need our own origin.
  app.use('*', async (context, next) => {
    const result = await auth.authenticate(context);
    if (!result.ok) {
      if (result.status === 429) {
        context.header('Retry-After', String(result.retryAfterSeconds));
        return context.json({ error: { code: 'too_many_attempts', message: result.message } }, 429);
      }
      if (result.status === 401 && context.req.method === 'GET' && wantsHtml(context)) {
        return context.redirect('/login', 303);
      }
      if (result.status === 401)
        context.header('WWW-Authenticate', 'Bearer realm="baton-dashboard"');
      return context.json(
        { error: { code: 'unauthorized', message: result.message } },
        result.status,
      );
    }
    const method = context.req.method;
    if (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS') {
      const sameOrigin = auth.checkSameOrigin(context, result.via);
      if (!sameOrigin.ok) {
        return context.json({ error: { code: 'forbidden', message: sameOrigin.message } }, 403);
      }
    }
    await next();
  });

  app.get('/metrics', async (context) =>
    context.body(await options.telemetry.registry.metrics(), 200, {
      'Content-Type': options.telemetry.registry.contentType,
    }),
  );
  app.get('/api/session', (context) => context.json({ authRequired: auth.required }));
  app.route('/api', createApiRoutes(options));
  app.all('/api/*', (context) => {
    throw new ApiError(404, 'not_found', `No API route ${context.req.method} ${context.req.path}.`);
  });

  if (options.queueBoard !== undefined) {
    if (options.queueUi !== 'full') {
      // Bull Board checks its read-only flag route by route; this holds for any route it adds.
      app.on(['POST', 'PUT', 'PATCH', 'DELETE'], ['/queues', '/queues/*'], (context) =>
        context.json(
          {
            error: {
              code: 'forbidden',
              message: 'The queue view is read-only (BATON_QUEUE_UI=full allows changes).',
            },
          },
          403,
        ),
      );
    }
    app.get('/queues/', (context) => context.redirect('/queues', 301));
    app.route('/queues', options.queueBoard);
  } else {
    app.get('/queues', (context) =>
      context.text(
        options.queueUi === 'off'
          ? 'The queue view is turned off (BATON_QUEUE_UI=off).'
          : 'Bull Board is not available: this dashboard was started without a queue.',
        404,
      ),
    );
  }

  app.get('/assets/*', (context) => {
    const name = context.req.path.slice('/assets/'.length);
    return serveAsset(context, assets.get(name));
  });

  // The UI is one page; the client reads the path to decide what to show.
  const shell = (context: Context) => serveAsset(context, assets.get('index.html'));
  app.get('/', shell);
  app.get('/projects/:id', shell);
  app.get('/projects/:id/*', shell);
  app.get('/new', shell);

  return app;
}
