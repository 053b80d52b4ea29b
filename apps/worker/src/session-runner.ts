import type Anthropic from '@anthropic-ai/sdk';
import type { MemoryStore } from '@baton/core';
import type { SessionBudgetsInput } from './project.js';

/**
 * The slice of `@baton/session`'s `runSession` contract the worker relies on. The processor takes
 * any function of this shape (tests and benchmarks inject their own); the default is the real
 * `runSession`.
 */
export interface WorkerRunSessionOptions {
  project: { id: string; goal: string };
  kind: 'init' | 'resume' | 'end';
  store: MemoryStore;
  workspace: string;
  client: Anthropic;
  model: string;
  budgets?: SessionBudgetsInput;
  signal?: AbortSignal;
  onEvent?: (event: WorkerSessionEvent) => void | Promise<void>;
  sessionId?: string;
  sessionNumber?: number;
  interrupted?: boolean;
}

/** A session event as the worker sees it: versioned JSON with a type. */
export interface WorkerSessionEvent {
  v: 1;
  type: string;
  at: number;
  projectId: string;
  sessionId: string;
}

/** The slice of `SessionResult` the worker reads. */
export interface WorkerSessionResult {
  sessionId: string;
  kind: 'init' | 'resume' | 'end';
  outcome: 'completed' | 'budget_exhausted' | 'cancelled' | 'failed' | 'refused';
  reason: string;
  stopReason?: string;
  turns: number;
  usage: { inputTokens: number; outputTokens: number; clearedInputTokens: number; costUsd: number };
  featuresBefore: { passing: number; total: number };
  featuresAfter: { passing: number; total: number };
  allFeaturesPass: boolean;
  flippedFeatures: string[];
  startedAt: number;
  endedAt: number;
  error?: string;
}

export type SessionRunner = (options: WorkerRunSessionOptions) => Promise<WorkerSessionResult>;
