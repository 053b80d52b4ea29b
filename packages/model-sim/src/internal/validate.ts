import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { invalidRequest } from './api-errors.js';

/**
 * Request validation with the API's kind of messages (`messages.1.content.0: ...`), so a client
 * bug shows up against the simulator the way it would against the real API.
 */

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
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
          `tools.${index}.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'.`,
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
 * Checks roles, block shapes and tool_use/tool_result pairing over the full history (after a
 * thread was resolved). Consecutive turns of one role are allowed: the API merges them.
 */
export function validateMessages(messages: unknown[]): asserts messages is BetaMessageParam[] {
  if (messages.length === 0) throw invalidRequest('messages: at least one message is required.');
  let pendingToolUses: string[] = [];
  let pendingAt = -1;
  let seenTurn = false;
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
    const blocks: unknown[] = typeof content === 'string' ? [] : content;
    const toolUseIds: string[] = [];
    const toolResultIds: string[] = [];
    blocks.forEach((block, blockIndex) => {
      const where = `messages.${index}.content.${blockIndex}`;
      if (!isRecord(block) || typeof block['type'] !== 'string') {
        throw invalidRequest(`${where}.type: Field required.`);
      }
      switch (block['type']) {
        case 'text':
          if (typeof block['text'] !== 'string')
            throw invalidRequest(`${where}.text: Field required.`);
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
          toolResultIds.push(block['tool_use_id']);
          break;
        default:
          break;
      }
    });
    if (pendingToolUses.length > 0) {
      const missing = pendingToolUses.filter((id) => !toolResultIds.includes(id));
      if (role !== 'user' || missing.length > 0) {
        throw missingToolResults(pendingAt, role !== 'user' ? pendingToolUses : missing);
      }
    }
    if (role === 'user') {
      const expected = pendingToolUses;
      const unexpected = toolResultIds.filter((id) => !expected.includes(id));
      if (unexpected.length > 0) {
        throw invalidRequest(
          `messages.${index}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${unexpected.join(', ')}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
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

function missingToolResults(at: number, ids: string[]): Error {
  return invalidRequest(
    `messages.${at + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${ids.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
  );
}
