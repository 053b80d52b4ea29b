// Same-origin fetch helpers. The session cookie travels automatically (SameSite=Strict);
// state changes are POSTs with a JSON body, and the browser adds the Origin header we check.

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function handle(response) {
  if (response.status === 401) {
    window.location.assign('/login');
    throw new ApiError(401, 'unauthorized', 'Please sign in.');
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = body.error ?? {};
    throw new ApiError(
      response.status,
      error.code ?? 'error',
      error.message ?? `HTTP ${response.status}`,
    );
  }
  return body;
}

/** What a failed request (or anything thrown) says, for a status line. */
export function errorMessage(error) {
  return error instanceof Error ? error.message : String(error);
}

export async function getJson(path, query = {}) {
  const url = new URL(path, window.location.origin);
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) url.searchParams.set(key, String(value));
  }
  return handle(
    await fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin' }),
  );
}

export async function postJson(path, body = {}) {
  return handle(
    await fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      credentials: 'same-origin',
      body: JSON.stringify(body),
    }),
  );
}

export function projectPath(id) {
  return `/api/projects/${encodeURIComponent(id)}`;
}

/** Opens an EventSource and reflects its state in the top bar's live indicator. */
export function openStream(path, handlers) {
  const live = document.getElementById('live');
  const source = new EventSource(path);
  const setState = (state, label) => {
    if (!live) return;
    live.dataset.state = state;
    live.textContent = label;
  };
  source.addEventListener('open', () => setState('open', 'live'));
  source.addEventListener('error', () => setState('closed', 'reconnecting'));
  for (const [event, handler] of Object.entries(handlers)) {
    source.addEventListener(event, (message) => {
      setState('open', 'live');
      handler(JSON.parse(message.data), message);
    });
  }
  window.addEventListener('pagehide', () => source.close());
  return source;
}
