/**
 * What the dashboard needs from `@baton/worker`'s control API. The dashboard reads and acts only
 * through these calls, the same ones the CLI uses, so a project created or cancelled here behaves
 * exactly like one created or cancelled with `baton enqueue` / `baton cancel`.
 *
 * The shapes are structural on purpose: `createBatonControl(...)` from `@baton/worker` satisfies
 * this interface, and tests can hand in that same real control object.
 */
import type { MemoryStore } from '@baton/core';

export type ProjectStatus = 'queued' | 'running' | 'paused' | 'completed' | 'failed' | 'cancelled';

export const PROJECT_STATUSES: readonly ProjectStatus[] = [
  'queued',
  'running',
  'paused',
  'completed',
  'failed',
  'cancelled',
];

export interface ProjectCountersLike {
  sessions: number;
  sessionsStarted: number;
  featuresPassing: number;
  featuresTotal: number;
  inputTokens: number;
  outputTokens: number;
  clearedInputTokens: number;
  costUsd: number;
}

export interface ActiveSessionLike {
  sessionId: string;
  sessionNumber: number;
  startedAt: number;
}

export interface ProjectRecordLike {
  id: string;
  goal: string;
  workspace: string;
  model: string | null;
  contextPreset: string;
  budgets: object;
  createdAt: number;
  status: ProjectStatus;
  statusReason: string | null;
  statusAt: number;
  counters: ProjectCountersLike;
  activeSession: ActiveSessionLike | null;
  lastError: string | null;
}

export interface StatusTransitionLike {
  at: number;
  from: ProjectStatus | null;
  to: ProjectStatus;
  reason: string | null;
}

export interface SessionSummaryLike {
  sessionId: string;
  sessionNumber: number;
  kind: string;
  outcome: string;
  reason: string;
  interrupted: boolean;
  turns: number;
  inputTokens: number;
  outputTokens: number;
  clearedInputTokens: number;
  costUsd: number;
  featuresBefore: { passing: number; total: number };
  featuresAfter: { passing: number; total: number };
  flippedFeatures: string[];
  startedAt: number;
  endedAt: number;
  error?: string;
}

/** Any event on a project's stream (session events and the worker's own events). */
export interface StreamEventLike {
  v: number;
  type: string;
  at: number;
  projectId: string;
  [field: string]: unknown;
}

export interface EventEntryLike {
  /** Redis stream id (`<ms>-<seq>`). */
  id: string;
  event: StreamEventLike;
}

export interface FileVersionLike {
  version: number;
  at: number;
  bytes: number;
  command: string;
  session?: string;
}

export interface MemoryChangeLike {
  id: string;
  at: number;
  command: string;
  path: string;
  newPath?: string;
  bytes: number;
  session?: string;
}

/** A project's memory store; history calls are optional (only the Redis store keeps versions). */
export interface DashboardMemoryStore extends MemoryStore {
  listHistory?(path: string): Promise<FileVersionLike[]>;
  readHistory?(path: string, version: number): Promise<string | null>;
  readChanges?(options?: { after?: string; count?: number }): Promise<MemoryChangeLike[]>;
}

export interface CreateProjectInput {
  id: string;
  goal: string;
  workspace?: string;
  model?: string;
  contextPreset?: 'coding' | 'search-heavy' | 'long-horizon' | 'off';
  budgets?: {
    maxUsd?: number;
    maxSessions?: number;
    maxTokens?: number;
    session?: { maxTurns?: number; maxUsd?: number };
  };
}

/** The control API surface the dashboard uses. */
export interface DashboardControl {
  listProjects(options?: { status?: ProjectStatus }): Promise<ProjectRecordLike[]>;
  getProject(projectId: string): Promise<ProjectRecordLike | null>;
  transitions(projectId: string): Promise<StatusTransitionLike[]>;
  listSessions(projectId: string): Promise<SessionSummaryLike[]>;
  /** Entries strictly after `fromId` (default: from the start), oldest first. */
  readEvents(
    projectId: string,
    options?: { fromId?: string; count?: number },
  ): Promise<EventEntryLike[]>;
  memoryStore(projectId: string): DashboardMemoryStore | Promise<DashboardMemoryStore>;
  queueCounts(): Promise<Record<string, number>>;
  createProject(input: CreateProjectInput): Promise<ProjectRecordLike>;
  resume(projectId: string): Promise<unknown>;
  cancel(projectId: string): Promise<unknown>;
}
