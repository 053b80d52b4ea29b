import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { invalidRequest } from './api-errors.js';

/**
 * Request validation with the API's kind of messages (`messages.1.content.0: ...`), so a client
 * bug shows up against the simulator the way it would against the real API.
 */

/** The API's rule for custom tool names (it answers `tools.N.custom.name: String should match ...`). */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const KNOWN_ROLES = new Set(['user', 'assistant', 'system']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function parseJsonBody(raw: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw invalidRequest('The request body is not valid JSON.');
  }
  if (!isRecord(body)) throw invalidRequest('The request body must be a JSON object.');
  return body;
}

/** Checks the fields shared by create and count_tokens (model, system, tools). */
function validateCommon(body: Record<string, unknown>): void {
  if (typeof body['model'] !== 'string' || body['model'].length === 0) {
    throw invalidRequest('model: Field required (a model id string, e.g. "sim").');
  }
  const system = body['system'];
  if (system !== undefined && system !== null && typeof system !== 'string') {
    if (!Array.isArray(system))
      throw invalidRequest('system: Input should be a string or a list of text blocks.');
    system.forEach((block, index) => {
      if (!isRecord(block) || block['type'] !== 'text' || typeof block['text'] !== 'string') {
        throw invalidRequest(
          `system.${index}: Input should be a text block { type: "text", text }.`,
        );
      }
    });
  }
  const tools = body['tools'];
  if (tools !== undefined && tools !== null) {
    if (!Array.isArray(tools)) throw invalidRequest('tools: Input should be a list.');
    const names = new Set<string>();
    tools.forEach((tool, index) => {
      if (!isRecord(tool)) throw invalidRequest(`tools.${index}: Input should be an object.`);
      const name = tool['name'];
      if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
        throw invalidRequest(
          `tools.${index}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`,
        );
      }
      const type = tool['type'];
      const custom = type === undefined || type === null || type === 'custom';
      if (custom && !isRecord(tool['input_schema'])) {
        throw invalidRequest(`tools.${index}.input_schema: Field required for a custom tool.`);
      }
      if (custom && isRecord(tool['input_schema']) && tool['input_schema']['type'] !== 'object') {
        throw invalidRequest(`tools.${index}.input_schema.type: Input should be 'object'.`);
      }
      if (!custom && typeof type !== 'string') {
        throw invalidRequest(`tools.${index}.type: Input should be a string.`);
      }
      if (names.has(name)) throw invalidRequest('tools: Tool names must be unique.');
      names.add(name);
    });
  }
  const contextManagement = body['context_management'];
  if (contextManagement !== undefined && contextManagement !== null) {
    if (!isRecord(contextManagement)) {
      throw invalidRequest('context_management: Input should be an object.');
    }
    const edits = contextManagement['edits'];
    if (edits !== undefined && !Array.isArray(edits)) {
      throw invalidRequest('context_management.edits: Input should be a list.');
    }
    (edits ?? []).forEach((edit: unknown, index: number) => {
      if (!isRecord(edit) || typeof edit['type'] !== 'string') {
        throw invalidRequest(`context_management.edits.${index}.type: Field required.`);
      }
    });
  }
}

/** Checks a create request's own fields; the messages are checked after thread resolution. */
export function validateCreateBody(body: Record<string, unknown>): void {
  validateCommon(body);
  const maxTokens = body['max_tokens'];
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    throw invalidRequest('max_tokens: Field required (an integer >= 1).');
  }
  if (!Array.isArray(body['messages'])) throw invalidRequest('messages: Field required (a list).');
  const stream = body['stream'];
  if (stream !== undefined && typeof stream !== 'boolean') {
    throw invalidRequest('stream: Input should be a valid boolean.');
  }
}

export function validateCountTokensBody(body: Record<string, unknown>): void {
  validateCommon(body);
  if (!Array.isArray(body['messages'])) throw invalidRequest('messages: Field required (a list).');
  validateMessages(body['messages'] as unknown[]);
}

/**
 * Checks roles, block shapes, non-empty content and tool_use/tool_result pairing over the full
 * history (after a thread was resolved), with the API's messages (docs/model-sim.md lists each
 * rule and where it comes from). Consecutive turns of one role are allowed: the API merges them.
 */
export function validateMessages(messages: unknown[]): asserts messages is BetaMessageParam[] {
  if (messages.length === 0) throw invalidRequest('messages: at least one message is required.');
  let pendingToolUses: string[] = [];
  let pendingAt = -1;
  let seenTurn = false;
  const last = messages.length - 1;
  messages.forEach((message, index) => {
    if (!isRecord(message)) throw invalidRequest(`messages.${index}: Input should be an object.`);
    const role = message['role'];
    if (typeof role !== 'string' || !KNOWN_ROLES.has(role)) {
      throw invalidRequest(
        `messages.${index}.role: Input should be 'user', 'assistant' or 'system'.`,
      );
    }
    if (role === 'system') return; // mid-conversation system messages take no part in pairing
    if (!seenTurn && role !== 'user') {
      throw invalidRequest(`messages.${index}.role: The first message must use the "user" role.`);
    }
    seenTurn = true;
    const content = message['content'];
    if (typeof content !== 'string' && !Array.isArray(content)) {
      throw invalidRequest(
        `messages.${index}.content: Input should be a string or a list of blocks.`,
      );
    }
    const empty = typeof content === 'string' ? content.length === 0 : content.length === 0;
    if (empty && !(role === 'assistant' && index === last)) {
      throw invalidRequest(
        `messages.${index}: all messages must have non-empty content except for the optional final assistant message`,
      );
    }
    if (typeof content === 'string') checkText(content);
    const blocks: unknown[] = typeof content === 'string' ? [] : content;
    const toolUseIds: string[] = [];
    const toolResults: Array<{ id: string; at: number }> = [];
    blocks.forEach((block, blockIndex) => {
      const where = `messages.${index}.content.${blockIndex}`;
      if (!isRecord(block) || typeof block['type'] !== 'string') {
        throw invalidRequest(`${where}.type: Field required.`);
      }
      switch (block['type']) {
        case 'text':
          if (typeof block['text'] !== 'string')
            throw invalidRequest(`${where}.text: Field required.`);
          checkText(block['text']);
          break;
        case 'tool_use':
          if (role !== 'assistant') {
            throw invalidRequest(
              `${where}: tool_use blocks may only appear in assistant messages.`,
            );
          }
          if (typeof block['id'] !== 'string' || typeof block['name'] !== 'string') {
            throw invalidRequest(`${where}: a tool_use block needs an id and a name.`);
          }
          toolUseIds.push(block['id']);
          break;
        case 'tool_result':
          if (role !== 'user') {
            throw invalidRequest(`${where}: tool_result blocks may only appear in user messages.`);
          }
          if (typeof block['tool_use_id'] !== 'string') {
            throw invalidRequest(`${where}.tool_use_id: Field required.`);
          }
          checkToolResultContent(block['content'], where);
          toolResults.push({ id: block['tool_use_id'], at: blockIndex });
          break;
        default:
          break;
      }
    });
    if (pendingToolUses.length > 0) {
      if (role !== 'user') throw missingToolResults(pendingAt, pendingToolUses);
      checkLeadingToolResults(index, blocks, pendingToolUses, pendingAt);
    }
    if (role === 'user') {
      const expected = pendingToolUses;
      const unexpected = toolResults.find((result) => !expected.includes(result.id));
      if (unexpected !== undefined) {
        throw invalidRequest(
          `messages.${index}.content.${unexpected.at}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${unexpected.id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        );
      }
      pendingToolUses = [];
    } else if (toolUseIds.length > 0) {
      pendingToolUses = toolUseIds;
      pendingAt = index;
    }
  });
  if (pendingToolUses.length > 0) throw missingToolResults(pendingAt, pendingToolUses);
}

/** Text blocks must say something: the API refuses empty and whitespace-only text. */
function checkText(text: string): void {
  if (text.length === 0) throw invalidRequest('messages: text content blocks must be non-empty');
  if (text.trim() === '') {
    throw invalidRequest('messages: text content blocks must contain non-whitespace text');
  }
}

/** Text blocks inside a tool_result's content follow the same rule (a string may be empty). */
function checkToolResultContent(content: unknown, where: string): void {
  if (!Array.isArray(content)) return;
  content.forEach((inner, index) => {
    if (isRecord(inner) && inner['type'] === 'text' && typeof inner['text'] === 'string') {
      checkText(inner['text']);
    }
    if (isRecord(inner) && inner['type'] === 'image')
      checkImage(inner, `${where}.content.${index}`);
  });
}

const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

/** An image block (in a message or a tool result): base64 data of one of four types. */
function checkImage(block: Record<string, unknown>, where: string): void {
  const source = block['source'];
  if (!isRecord(source)) throw invalidRequest(`${where}.image.source: Field required`);
  if (source['type'] !== 'base64') return;
  if (!IMAGE_MEDIA_TYPES.includes(String(source['media_type']))) {
    throw invalidRequest(
      `${where}.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`,
    );
  }
  if (typeof source['data'] !== 'string' || source['data'].length === 0) {
    throw invalidRequest(`${where}.image.source.base64.data: Field required`);
  }
}

/**
 * The user message after `tool_use` blocks must BEGIN with one tool_result per id: text (a note,
 * guidance) may only follow them. A result that is there but not at the front is the API's
 * "Did not find N tool_result block(s) at the beginning"; one that is missing altogether is its
 * "ids were found without tool_result blocks immediately after".
 */
function checkLeadingToolResults(
  index: number,
  blocks: unknown[],
  expected: string[],
  toolUseAt: number,
): void {
  const leading: string[] = [];
  for (const block of blocks) {
    if (!isRecord(block) || block['type'] !== 'tool_result') break;
    leading.push(String(block['tool_use_id']));
  }
  const notLeading = expected.filter((id) => !leading.includes(id));
  if (notLeading.length === 0) return;
  const presentLater = blocks.some(
    (block) =>
      isRecord(block) &&
      block['type'] === 'tool_result' &&
      notLeading.includes(String(block['tool_use_id'])),
  );
  if (presentLater || leading.length === 0) {
    const anyResult = blocks.some((block) => isRecord(block) && block['type'] === 'tool_result');
    if (presentLater || anyResult) {
      throw invalidRequest(
        `messages.${index}: Did not find ${expected.length} \`tool_result\` block(s) at the beginning of this message. Messages following \`tool_use\` blocks must begin with a matching number of \`tool_result\` blocks.`,
      );
    }
  }
  throw missingToolResults(toolUseAt, notLeading);
}

function missingToolResults(at: number, ids: string[]): Error {
  return invalidRequest(
    `messages.${at}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${ids.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
  );
}
