import { randomUUID } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import { defineContextConfig } from '@baton/context-config';
import { SessionError } from './errors.js';
import { SessionRunner } from './internal/session-runner.js';
import type { RunSessionOptions, SessionResult } from './types.js';

export { NON_STREAMING_MAX_TOKENS } from './internal/model-client.js';

async function validate(options: RunSessionOptions): Promise<string> {
  if (!['init', 'resume', 'end'].includes(options.kind)) {
    throw new SessionError(
      'invalid_options',
      `Unknown session kind ${JSON.stringify(options.kind)}: use init, resume or end.`,
    );
  }
  if (options.project.id.trim() === '')
    throw new SessionError('invalid_options', 'The project id is empty.');
  if (options.kind === 'init' && options.project.goal.trim() === '') {
    throw new SessionError('invalid_options', 'An init session needs a non-empty project goal.');
  }
  const streaming: unknown = options.streaming;
  if (streaming !== undefined && typeof streaming !== 'boolean' && streaming !== 'auto') {
    throw new SessionError(
      'invalid_options',
      `streaming must be true, false or 'auto', got ${JSON.stringify(streaming)}.`,
    );
  }
  const info = await stat(options.workspace).catch(() => null);
  if (info === null || !info.isDirectory()) {
    throw new SessionError('workspace', 'The workspace directory does not exist.');
  }
  return realpath(options.workspace);
}

/**
 * Run one agent session of one project: the session prompt, the tool loop on the real SDK client,
 * budgets, cancellation, the end-of-session turn, a git commit of the workspace and events.
 * Never throws for model, API or tool failures (they become the result's outcome); throws
 * `SessionError` only for invalid options.
 */
export async function runSession(options: RunSessionOptions): Promise<SessionResult> {
  const root = await validate(options);
  const context = options.context ?? defineContextConfig({ preset: 'coding' });
  const runner = new SessionRunner(
    { ...options, context },
    root,
    options.sessionId ?? randomUUID(),
  );
  return runner.run();
}
