// A session's page: its transcript as a conversation. Everything the model or a command wrote is
// untrusted: tool calls, tool results, prompts and guidance go in as text (textContent); model
// text is the server's Markdown rendering through the memory files' sanitiser.
import { errorMessage, getJson, projectPath } from './api.js';

import { h, replace, setSanitizedHtml } from './dom.js';
import { formatDateTime, formatNumber, formatTokens, formatUsd, usageInput } from './format.js';

/** @typedef {import('./api-types.js').TranscriptBlock} TranscriptBlock */
/** @typedef {import('./api-types.js').TranscriptMessage} TranscriptMessage */

/**
 * Where a session's page is.
 * @param {string} projectId
 * @param {string} sessionId
 */
export function sessionHref(projectId, sessionId) {
  return `/projects/${encodeURIComponent(projectId)}/sessions/${encodeURIComponent(sessionId)}`;
}

/**
 * One line for a tool call's summary: its command or path when it has one.
 * @param {Extract<TranscriptBlock, { type: 'tool_use' }>} block
 */
function callSummary(block) {
  const input = block.input ?? {};
  /** @type {{ command?: unknown, path?: unknown }} */
  const fields = typeof input === 'object' ? input : {};
  const main = typeof fields.command === 'string' ? fields.command : '';
  const target = typeof fields.path === 'string' ? fields.path : '';
  const line = [main, target].filter((part) => part !== '').join(' ') || JSON.stringify(input);

  const oneLine = line.replace(/\s+/g, ' ').trim();
  return oneLine.length > 100 ? `${oneLine.slice(0, 99)}…` : oneLine;
}

/** @param {{ capped?: import('./api-types.js').TranscriptCap | undefined }} block */
function capNote(block) {
  return block.capped
    ? ` · cut: ${formatNumber(block.capped.kept)} of ${formatNumber(block.capped.characters)} characters kept`
    : '';
}

/** @param {import('./api-types.js').AppliedEdit} edit */
function describeEdit(edit) {
  const cleared = `${formatTokens(edit.cleared_input_tokens ?? 0)} input tokens`;
  if (edit.type === 'clear_thinking_20251015') {
    return `context edit: cleared thinking of ${edit.cleared_thinking_turns} turns (${cleared})`;
  }
  return `context edit: cleared ${edit.cleared_tool_uses} tool uses (${cleared})`;
}

/**
 * @param {TranscriptBlock} block
 * @param {TranscriptMessage} message
 * @param {Map<string, string>} toolNames
 */
function userBlock(block, message, toolNames) {
  const unsent = message.unsent ? ' · never sent' : '';
  switch (block.type) {
    case 'text':
      if (block.source === 'guidance') {
        return h(
          'div',
          { class: 'block guidance', dataset: { testid: 'transcript-guidance' } },
          h(
            'p',
            { class: 'block-title' },
            `Operator guidance ${(block.guidanceIds ?? []).join(', ')}${unsent}`,
          ),
          h('pre', {}, block.text),
        );
      }
      return h(
        'details',
        { class: `block ${block.source === 'prompt' ? 'prompt' : 'note'}` },
        h(
          'summary',
          {},
          `${block.source === 'prompt' ? 'Prompt' : 'Note from Baton'}${block.guidanceIds ? ` (with guidance ${block.guidanceIds.join(', ')})` : ''}${unsent}`,
        ),
        h('pre', {}, block.text),
      );
    case 'tool_result':
      return h(
        'details',
        {
          class: `block tool-result${block.isError ? ' is-error' : ''}`,
          dataset: { testid: 'tool-result' },
        },
        h(
          'summary',
          {},
          `Result of ${toolNames.get(block.toolUseId) ?? 'a tool'} · ${block.isError ? 'error' : 'ok'}${capNote(block)}${unsent}`,
        ),
        h('pre', {}, block.content),
      );
    default:
      return h(
        'p',
        { class: 'block muted' },
        `[${'blockType' in block ? block.blockType : block.type} block]`,
      );
  }
}

/** @param {TranscriptBlock} block */
function assistantBlock(block) {
  switch (block.type) {
    case 'text': {
      const text = h('div', {
        class: 'block model-text markdown',
        dataset: { testid: 'model-text' },
      });
      setSanitizedHtml(text, block.html ?? '');
      return text;
    }
    case 'tool_use':
      return h(
        'details',
        { class: 'block tool-call', dataset: { testid: 'tool-call' } },
        h('summary', {}, h('code', {}, block.name), ` ${callSummary(block)}${capNote(block)}`),
        h('pre', {}, JSON.stringify(block.input, null, 2)),
      );
    case 'thinking':
      return h(
        'details',
        { class: 'block thinking' },
        h('summary', {}, 'Thinking'),
        h('pre', {}, block.thinking),
      );
    default:
      return h(
        'p',
        { class: 'block muted' },
        `[${'blockType' in block ? block.blockType : block.type} block]`,
      );
  }
}

/** @param {TranscriptMessage} message */
function assistantHead(message) {
  const parts = [`turn ${message.turn}${message.phase === 'end' ? ' (end of session)' : ''}`];
  if (message.stopReason) parts.push(`stop ${message.stopReason}`);
  if (message.usage) {
    parts.push(
      `in ${formatTokens(usageInput(message.usage).total)} (cache read ${formatTokens(message.usage.cacheReadInputTokens ?? 0)})`,
      `out ${formatTokens(message.usage.outputTokens)}`,
    );
  }
  if (message.costUsd !== undefined) parts.push(formatUsd(message.costUsd));
  return parts.join(' · ');
}

/**
 * @param {string} projectId
 * @param {import('./api-types.js').Transcript} transcript
 */
function renderTranscript(projectId, transcript) {
  /** @type {Map<string, string>} */
  const toolNames = new Map();
  /** @type {HTMLLIElement[]} */
  const items = [];
  /** @type {Set<number>} */
  const anchored = new Set();
  for (const message of transcript.messages) {
    const id = anchored.has(message.turn) ? undefined : `turn-${message.turn}`;
    anchored.add(message.turn);
    if (message.role === 'assistant') {
      for (const block of message.content) {
        if (block.type === 'tool_use') toolNames.set(block.id, block.name);
      }
      items.push(
        h(
          'li',
          { class: 'message assistant', id, dataset: { turn: message.turn, role: 'assistant' } },
          h('p', { class: 'message-head' }, 'Assistant · ', assistantHead(message)),
          ...(message.appliedEdits ?? []).map((edit) =>
            h('p', { class: 'edit', dataset: { testid: 'context-edit' } }, describeEdit(edit)),
          ),
          ...message.content.map(assistantBlock),
        ),
      );
    } else {
      items.push(
        h(
          'li',
          { class: 'message user', id, dataset: { turn: message.turn, role: 'user' } },
          ...message.content.map((block) => userBlock(block, message, toolNames)),
        ),
      );
    }
  }
  const end = transcript.end;
  return h(
    'div',
    { class: 'page session-page' },
    h(
      'p',
      { class: 'crumbs' },
      h('a', { href: `/projects/${encodeURIComponent(projectId)}` }, projectId),
      ` / session ${transcript.sessionNumber}`,
    ),
    h('h1', {}, `Session ${transcript.sessionNumber} (${transcript.kind})`),
    h(
      'p',
      { class: 'muted', dataset: { testid: 'session-summary' } },
      [
        transcript.model,
        `started ${formatDateTime(transcript.startedAt)}`,
        transcript.interrupted ? 'resumed after an interruption' : null,
        end === null
          ? 'never finished (its worker stopped): kept up to its last completed step'
          : `${end.outcome}${end.stopReason ? ` (${end.stopReason})` : ''} · ${end.turns} turns · ${formatUsd(end.costUsd)}`,
      ]
        .filter((part) => part !== null)
        .join(' · '),
    ),
    end === null ? null : h('p', { class: 'muted' }, end.reason),
    h('ol', { class: 'transcript', dataset: { testid: 'transcript' } }, ...items),
  );
}

/**
 * @param {HTMLElement} main
 * @param {string} projectId
 * @param {string} sessionId
 */
export function sessionPage(main, projectId, sessionId) {
  replace(main, h('p', { class: 'muted' }, 'Loading…'));
  /** @type {Promise<{ transcript: import('./api-types.js').Transcript }>} */
  const read = getJson(`${projectPath(projectId)}/transcripts/${encodeURIComponent(sessionId)}`);
  read

    .then(({ transcript }) => {
      replace(main, renderTranscript(projectId, transcript));
      const target = window.location.hash
        ? document.getElementById(window.location.hash.slice(1))
        : null;
      target?.scrollIntoView();
    })
    .catch((/** @type {unknown} */ error) => {
      replace(
        main,
        h(
          'p',
          { class: 'error', role: 'alert', dataset: { testid: 'session-error' } },
          errorMessage(error),
        ),
      );
    });
}
