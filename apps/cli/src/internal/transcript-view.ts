import type { AppliedEdit, Transcript, TranscriptBlock, TranscriptMessage } from '@baton/session';
import { formatTokens, formatUsd } from './format.js';

/**
 * Control characters other than newline and tab, shown escaped: a model's text or a command's
 * output must not move the cursor, retitle the window or hide lines on the reader's terminal.
 */
// eslint-disable-next-line no-control-regex -- control characters are exactly what we escape
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export function terminalSafe(text: string): string {
  return text.replace(CONTROL, (character) => {
    const code = character.charCodeAt(0);
    return `\\x${code.toString(16).padStart(2, '0')}`;
  });
}

function indent(text: string, by = '  '): string {
  return terminalSafe(text)
    .split('\n')
    .map((line) => (line === '' ? '' : `${by}${line}`))
    .join('\n');
}

function dateTime(at: number): string {
  return new Date(at)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

function describeEdit(edit: AppliedEdit): string {
  const cleared = `${formatTokens(edit.cleared_input_tokens)} input tokens`;
  if (edit.type === 'clear_thinking_20251015') {
    return `cleared thinking of ${edit.cleared_thinking_turns} turns (${cleared})`;
  }
  return `cleared ${edit.cleared_tool_uses} tool uses (${cleared})`;
}

function usageLine(message: TranscriptMessage): string {
  const parts = [`stop ${message.stopReason ?? '?'}`];
  const usage = message.usage;
  if (usage !== undefined) {
    const input = usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
    parts.push(
      `in ${formatTokens(input)} (cache read ${formatTokens(usage.cacheReadInputTokens)}, written ${formatTokens(usage.cacheCreationInputTokens)})`,
      `out ${formatTokens(usage.outputTokens)}`,
    );
  }
  if (message.costUsd !== undefined) parts.push(formatUsd(message.costUsd));
  if (message.durationMs !== undefined) parts.push(`${(message.durationMs / 1000).toFixed(1)} s`);
  return parts.join(' · ');
}

function capNote(block: { capped?: { characters: number; kept: number } | undefined }): string {
  return block.capped === undefined
    ? ''
    : ` · capped: ${block.capped.kept} of ${block.capped.characters} characters kept`;
}

function userBlock(
  block: TranscriptBlock,
  message: TranscriptMessage,
  toolNames: Map<string, string>,
): string {
  const where = `turn ${message.turn}${message.unsent === true ? ' · never sent' : ''}`;
  switch (block.type) {
    case 'text': {
      const title =
        block.source === 'prompt'
          ? 'prompt'
          : block.source === 'guidance'
            ? `operator guidance ${(block.guidanceIds ?? []).join(', ')}`.trimEnd()
            : 'note from Baton';
      return `── ${title} · ${where}\n${indent(block.text)}`;
    }
    case 'tool_result': {
      const tool = toolNames.get(block.toolUseId) ?? 'tool';
      const status = block.isError ? 'error' : 'ok';
      // Listed under the call that produced it, not the request that later carried it.
      const unsent = message.unsent === true ? ' · never sent' : '';
      return `── result of ${tool} (${terminalSafe(block.toolUseId)}) · ${status}${unsent}${capNote(block)}\n${indent(block.content)}`;
    }
    default:
      return `── ${blockTypeName(block)} · ${where}`;
  }
}

function blockTypeName(block: TranscriptBlock): string {
  return block.type === 'other' ? `[${terminalSafe(block.blockType)} block]` : `[${block.type}]`;
}

function assistantMessage(message: TranscriptMessage): string {
  const lines = [
    `── assistant · turn ${message.turn}${message.phase === 'end' ? ' (end of session)' : ''} · ${usageLine(message)}`,
  ];
  for (const edit of message.appliedEdits ?? [])
    lines.push(`  context edit: ${describeEdit(edit)}`);
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
        lines.push(indent(block.text));
        break;
      case 'thinking':
        lines.push(`  (thinking)\n${indent(block.thinking, '    ')}`);
        break;
      case 'tool_use':
        lines.push(
          `  ▸ ${terminalSafe(block.name)} (${terminalSafe(block.id)})${capNote(block)}`,
          indent(JSON.stringify(block.input, null, 2), '    '),
        );
        break;
      default:
        lines.push(`  ${blockTypeName(block)}`);
    }
  }
  return lines.join('\n');
}

/** A transcript as text for a terminal: a heading, then one section per message and block. */
export function formatTranscript(transcript: Transcript): string {
  const end = transcript.end;
  const heading = [
    `Session ${transcript.sessionNumber} (${transcript.kind})`,
    terminalSafe(transcript.model),
    `started ${dateTime(transcript.startedAt)}`,
    end === null
      ? 'never finished'
      : `${end.outcome}${end.stopReason === undefined ? '' : ` (${end.stopReason})`} · ${end.turns} turns · ${formatUsd(end.costUsd)}`,
  ].join(' · ');
  const sections = [`═══ ${heading}`, `    session id ${transcript.sessionId}`];
  if (transcript.interrupted) sections.push('    (the previous session was interrupted)');
  const toolNames = new Map<string, string>();
  for (const message of transcript.messages) {
    if (message.role === 'assistant') {
      for (const block of message.content) {
        if (block.type === 'tool_use') toolNames.set(block.id, terminalSafe(block.name));
      }
      sections.push(assistantMessage(message));
    } else {
      for (const block of message.content) sections.push(userBlock(block, message, toolNames));
    }
  }
  if (end === null) {
    const last = transcript.messages.at(-1);
    sections.push(
      `── no end: the session stopped without finishing (its worker was stopped or killed); kept up to turn ${last?.turn ?? 0}`,
    );
  } else {
    sections.push(
      `── end · ${dateTime(end.endedAt)} · ${end.outcome}: ${terminalSafe(end.reason)}`,
    );
    if (end.fallback !== undefined) {
      sections.push(
        `   fell back from ${terminalSafe(end.fallback.from)} to ${terminalSafe(end.fallback.to)} at turn ${end.fallback.turn} (the model stayed overloaded)`,
      );
    }
  }
  return `${sections.join('\n\n')}\n`;
}
