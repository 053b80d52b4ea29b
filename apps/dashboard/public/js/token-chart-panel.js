// The project page's token chart: input tokens per turn, the newest window
// (GET /api/projects/:id/tokens), older windows on demand (…/tokens?before=), and live `turn`
// events appended as they arrive.
import { errorMessage, getJson, projectPath } from './api.js';
import { tokenChart } from './chart.js';
import { h, replace } from './dom.js';
import { usageInput } from './format.js';
import { createOlderButton } from './older-button.js';

/** @typedef {import('./api-types.js').TurnPoint} TurnPoint */
/** @typedef {import('./api-types.js').ProjectEventOf<'turn'>} TurnEvent */

/**
 * One chart point from a live `turn` event, shaped like the tokens endpoint's turns.
 * @param {TurnEvent} event
 * @returns {TurnPoint}
 */
function turnFromEvent(event) {
  const input = usageInput(event.usage);
  return {
    sessionId: event.sessionId,
    sessionNumber: null,
    turn: event.turn,
    at: event.at,
    inputTokens: input.total,
    uncachedInputTokens: input.uncached,
    cacheReadInputTokens: input.read,
    cacheCreationInputTokens: input.write,
    outputTokens: event.usage.outputTokens,
    clearedInputTokens: event.clearedInputTokens,
    edits: event.appliedEdits.map((edit) => edit.type),
  };
}

/**
 * createTokenChartPanel(projectId) -> { elements, load(), addTurn(event) }: `load` fetches the
 * newest window; `addTurn` appends a live `turn` event.
 * @param {string} projectId
 */

export function createTokenChartPanel(projectId) {
  /** @type {TurnPoint[]} */
  let turns = [];
  const chart = h('div', { class: 'chart-box' });
  /** @type {(before: string) => Promise<string | null>} */
  const loadEarlier = async (before) => {
    /** @type {import('./api-types.js').TokensPage} */
    const page = await getJson(`${projectPath(projectId)}/tokens`, { before });
    turns = [...page.turns, ...turns];
    render();
    return page.before;
  };
  const earlierTurns = createOlderButton('Earlier turns', 'earlier-turns', loadEarlier);

  function render() {
    replace(chart, tokenChart(turns));
  }

  async function load() {
    try {
      /** @type {import('./api-types.js').TokensPage} */
      const window = await getJson(`${projectPath(projectId)}/tokens`);
      turns = window.turns;
      earlierTurns.setCursor(window.before);
      render();
    } catch (error) {
      replace(chart, h('p', { class: 'error' }, errorMessage(error)));
    }
  }

  /** @param {TurnEvent} event */
  function addTurn(event) {
    const turn = turnFromEvent(event);
    // A live turn carries no session number; a loaded turn of the same session does.
    const known = turns.find(
      (other) => other.sessionId === event.sessionId && other.sessionNumber !== null,
    );
    if (known) turn.sessionNumber = known.sessionNumber;
    turns.push(turn);
    render();
  }

  return {
    elements: [
      h(
        'p',
        { class: 'muted legend' },
        'Bars: input tokens read from the prompt cache (green), written to it (amber), uncached (blue); the line is the total. Orange markers: turns where context editing cleared input tokens (the dashed rule shows how many). Vertical rules: session starts.',
      ),
      chart,
      earlierTurns.element,
    ],
    load,
    addTurn,
  };
}
