/**
 * How a project's record is laid out in its Redis hash: the configuration as one JSON field, the
 * state (status, active session, checkpoint, error) and one field per counter, so counters move
 * with HINCRBY and a control call never overwrites a worker's count.
 */
import type { ProjectSandbox, SandboxDescription } from '@baton/workspace';
import type { McpConfig } from '@baton/session';
import type { NewProjectRecord } from '../project-log.js';
import {
  emptyCounters,
  type ActiveSessionInfo,
  type ProjectCounters,
  type ProjectRecord,
  type ProjectStatus,
  type ProjectVerification,
} from '../project.js';

const COUNTER_FIELDS: readonly (keyof ProjectCounters)[] = [
  'sessions',
  'sessionsStarted',
  'featuresPassing',
  'featuresTotal',
  'featuresVerified',
  'featuresClaimed',
  'featuresRegressed',
  'inputTokens',
  'cacheReadInputTokens',
  'cacheCreationInputTokens',
  'outputTokens',
  'clearedInputTokens',
  'costUsd',
  'consecutiveFailures',
  'sessionsWithoutProgress',
  'uselessContextFills',
  'interruptions',
];

/** The fields of the `config` JSON: everything a project is created with and never changes. */
type StoredConfig = Pick<
  ProjectRecord,
  | 'goal'
  | 'workspace'
  | 'adoptWorkspace'
  | 'model'
  | 'budgets'
  | 'contextPreset'
  | 'context'
  | 'repo'
  | 'base'
  | 'baseCommit'
  | 'branch'
  | 'skipHooks'
> & {
  fallbackModel?: string;
  sandbox?: ProjectSandbox;
  verification?: ProjectVerification;
  mcp?: McpConfig | undefined;
};

/** The hash fields (name, value, name, value...) of a new project in status `queued`. */
export function newProjectHashFields(record: NewProjectRecord): (string | number)[] {
  const config: StoredConfig = {
    goal: record.goal,
    workspace: record.workspace,
    adoptWorkspace: record.adoptWorkspace,
    model: record.model,
    ...(record.fallbackModel === null ? {} : { fallbackModel: record.fallbackModel }),
    budgets: record.budgets,
    contextPreset: record.contextPreset,
    context: record.context,
    ...(record.sandbox === null ? {} : { sandbox: record.sandbox }),
    ...(record.verification === null ? {} : { verification: record.verification }),
    // JSON.stringify below leaves an undefined `mcp` out of the hash field.
    mcp: record.mcp,
    repo: record.repo,
    base: record.base,
    baseCommit: record.baseCommit,
    branch: record.branch,
    skipHooks: record.skipHooks,
  };
  const now = record.createdAt;
  const fields: (string | number)[] = [
    'id',
    record.id,
    'config',
    JSON.stringify(config),
    'createdAt',
    now,
    'status',
    'queued',
    'statusReason',
    'created',
    'statusAt',
    now,
  ];
  // A re-created project continues from the branch Baton already pushed for it.
  if (record.lastCheckpoint) fields.push('lastCheckpoint', record.lastCheckpoint);
  for (const field of COUNTER_FIELDS) fields.push(field, 0);
  return fields;
}

/** What a search matches: the id and the start of the goal, lowercased once here. */
export function searchText(projectId: string, goal: string): string {
  return `${projectId}\n${goal.slice(0, 2_000)}`.toLowerCase();
}

/** The record in a project hash, or `null` when the hash holds no project. */
export function parseProjectHash(
  hash: Record<string, string> | null | undefined,
): ProjectRecord | null {
  if (!hash || hash.id === undefined || hash.config === undefined) return null;
  // Every field a project is created with is stored (the migrations upgraded older configs);
  // the optional ones are absent when unset.
  const config = JSON.parse(hash.config) as StoredConfig;
  const counters = emptyCounters();
  for (const field of COUNTER_FIELDS) {
    const value = Number(hash[field]);
    counters[field] = Number.isFinite(value) ? value : 0;
  }
  return {
    id: hash.id,
    goal: config.goal,
    workspace: config.workspace,
    adoptWorkspace: config.adoptWorkspace,
    repo: config.repo,
    base: config.base,
    baseCommit: config.baseCommit,
    branch: config.branch,
    skipHooks: config.skipHooks,
    model: config.model,
    fallbackModel: config.fallbackModel ?? null,
    budgets: config.budgets,
    contextPreset: config.contextPreset,
    context: config.context,
    sandbox: config.sandbox ?? null,
    verification: config.verification ?? null,
    mcp: config.mcp,
    sessionSandbox: hash.sessionSandbox
      ? (JSON.parse(hash.sessionSandbox) as SandboxDescription)
      : null,
    createdAt: Number(hash.createdAt) || 0,
    status: (hash.status ?? 'queued') as ProjectStatus,
    statusReason: hash.statusReason ? hash.statusReason : null,
    statusAt: Number(hash.statusAt) || 0,
    counters,
    activeSession: hash.activeSession
      ? (JSON.parse(hash.activeSession) as ActiveSessionInfo)
      : null,
    lastError: hash.lastError ? hash.lastError : null,
    lastCheckpoint: hash.lastCheckpoint ? hash.lastCheckpoint : null,
  };
}
