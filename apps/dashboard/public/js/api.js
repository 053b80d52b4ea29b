// Same-origin fetch helpers. The session cookie travels automatically (SameSite=Strict);
// state changes are POSTs with a JSON body, and the browser adds the Origin header we check.

class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * The answer's JSON body. Its type is the caller's to name (see api-types.js): the server's
 * answers are checked against those types at build time, not here.
 * @template T
 * @param {Response} response
 * @returns {Promise<T>}
 */
async function handle(response) {
  if (response.status === 401) {
    window.location.assign('/login');
    throw new ApiError(401, 'unauthorized', 'Please sign in.');
  }
  /** @type {unknown} */
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = errorFields(body);
    throw new ApiError(
      response.status,
      error.code ?? 'error',
      error.message ?? `HTTP ${response.status}`,
    );
  }
  return /** @type {T} */ (body);
}

/**
 * The `{ error: { code, message } }` of a failed answer, as far as it has them.
 * @param {unknown} body
 * @returns {{ code?: string, message?: string }}
 */
function errorFields(body) {
  const error =
    typeof body === 'object' && body !== null && 'error' in body ? body.error : undefined;
  if (typeof error !== 'object' || error === null) return {};
  return {
    ...('code' in error && typeof error.code === 'string' ? { code: error.code } : {}),
    ...('message' in error && typeof error.message === 'string' ? { message: error.message } : {}),
  };
}

/**
 * What a failed request (or anything thrown) says, for a status line.
 * @param {unknown} error
 */
export function errorMessage(error) {
  return error instanceof Error ? error.message : String(error);
}

/**
 * @template T
 * @param {string} path
 * @param {Record<string, string | number | null | undefined>} [query]
 * @returns {Promise<T>}
 */
export async function getJson(path, query = {}) {
  const url = new URL(path, window.location.origin);
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) url.searchParams.set(key, String(value));
  }
  return handle(
    await fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin' }),
  );
}

/**
 * @template T
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<T>}
 */
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

/** @param {string} id */
export function projectPath(id) {
  return `/api/projects/${encodeURIComponent(id)}`;
}

/**
 * Opens an EventSource and reflects its state in the top bar's live indicator. Each handler gets
 * its event's parsed data and the message itself; the type of the data is what the handler's
 * parameter declares (the streams' shapes are in api-types.js).
 * @template {Record<string, unknown>} Events the data of each event, by event name
 * @param {string} path
 * @param {{ [E in keyof Events]: (data: Events[E], message: MessageEvent<string>) => unknown }} handlers
 */
export function openStream(path, handlers) {
  const live = document.getElementById('live');
  const source = new EventSource(path);
  /**
   * @param {string} state
   * @param {string} label
   */
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
