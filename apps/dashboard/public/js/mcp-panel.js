// The project page's MCP servers: the project's own servers (names and kinds only, never their
// commands, env or headers) and each server's state, tool count and failure line in the latest
// session, from the session summaries (GET /api/projects/:id) and live `mcp-server` events.
import { h, replace } from './dom.js';

/**
 * A server's state in a session: from its summary, or from live `mcp-server` events (which also
 * say where it came from and its transport).
 * @typedef {{ state: string, tools: number, message?: string | undefined, source?: string, transport?: string }} ServerState
 */

/**
 * One server's line: `everything (project, stdio): ready · 13 tools`, or its failure.
 * @param {{ name: string, type: string | undefined, source: string | undefined, state: string | undefined, tools: number, message: string | undefined }} server
 */
function serverRow(server) {
  const state = server.state ?? 'not started yet';
  const tools = server.state === 'ready' ? ` · ${server.tools} tools` : '';
  const origin = [server.source, server.type].filter(Boolean).join(', ');
  return h(
    'li',
    {
      class:
        server.state === 'ready' || server.state === undefined ? 'mcp-server' : 'mcp-server failed',
      dataset: { server: server.name, state },
    },
    h('strong', {}, server.name),
    origin ? ` (${origin})` : '',
    `: ${state}${tools}`,
    server.message ? h('div', { class: 'muted' }, server.message) : null,
  );
}

/**
 * createMcpPanel() -> { element, show(detail), addEvent(event) }: `show` takes the project view
 * answer; `addEvent` folds a live `mcp-server` event in (a new session starts a new list).
 */
export function createMcpPanel() {
  const element = h('div', { dataset: { testid: 'mcp-servers' } }, 'Loading…');
  /** @type {import('./api-types.js').ProjectView['mcpServers']} */
  let own = [];
  /**
   * The shown session's servers by name; `label` says which session they are of.
   * @type {Map<string, ServerState>}
   */
  let states = new Map();
  let label = 'No session has started its servers yet.';
  /**
   * The session whose live events are shown, until its summary arrives.
   * @type {string | null}
   */
  let liveSession = null;

  function render() {
    const names = new Set([...own.map((server) => server.name), ...states.keys()]);
    if (names.size === 0) {
      replace(
        element,
        h(
          'p',
          { class: 'muted' },
          'No MCP servers of its own; the repository’s .mcp.json and the worker’s BATON_MCP_CONFIG apply at each session.',
        ),
      );
      return;
    }
    const rows = [...names].sort().map((name) => {
      const configured = own.find((server) => server.name === name);
      const state = states.get(name);
      return serverRow({
        name,
        type: state?.transport ?? configured?.type,
        source: state?.source ?? (configured ? 'project' : undefined),
        state: state?.state,
        tools: state?.tools ?? 0,
        message: state?.message,
      });
    });
    replace(element, h('p', { class: 'muted' }, label), h('ul', { class: 'mcp-servers' }, ...rows));
  }

  /** @param {Pick<import('./api-types.js').ProjectDetail, 'project' | 'sessions'>} detail */
  function show(detail) {
    own = detail.project.mcpServers ?? [];
    const summaries = detail.sessions ?? [];
    const latest = summaries
      .filter((session) => (session.mcp ?? []).length > 0)
      .sort((a, b) => b.sessionNumber - a.sessionNumber)[0];
    // Live states of a running session stay until that session's summary is there.
    const liveEnded =
      liveSession === null || summaries.some((session) => session.sessionId === liveSession);
    if (latest !== undefined && liveEnded) {
      label = `In session ${latest.sessionNumber}:`;
      states = new Map(
        (latest.mcp ?? []).map((server) => [
          server.server,
          { state: server.state, tools: server.tools, message: server.message },
        ]),
      );
      liveSession = null;
    }
    render();
  }

  /** @param {import('./api-types.js').ProjectEvent} event */
  function addEvent(event) {
    if (event.type !== 'mcp-server') return;
    if (event.sessionId !== liveSession) {
      states = new Map();
      liveSession = event.sessionId;
      label = 'In the running session:';
    }
    states.set(event.server, {
      state: event.state,
      tools: event.tools.length,
      message: event.message,
      source: event.source,
      transport: event.transport,
    });
    render();
  }

  return { element, show, addEvent };
}
