/**
 * What the dashboard needs from `@baton/projects`' control API. The dashboard reads and acts only
 * through these calls, the same ones the CLI uses, so a project created or cancelled here behaves
 * exactly like one created with `baton enqueue` or cancelled with `baton cancel`.
 */
import type {
  BatonControl,
  EventEntry,
  FeatureFlip,
  ProjectEvent,
  ProjectRecord,
  ProjectStatus,
} from '@baton/projects';

/** The part of `BatonControl` (from `createBatonControl`) the dashboard calls. */
export type DashboardControl = Pick<
  BatonControl,
  | 'keys'
  | 'createProject'
  | 'enqueue'
  | 'resume'
  | 'cancel'
  | 'pause'
  | 'say'
  | 'getProject'
  | 'listProjects'
  | 'pageProjects'
  | 'countProjects'
  | 'projectChanges'
  | 'projectChangeVersion'
  | 'featureFlips'
  | 'readChecks'
  | 'pageSessions'
  | 'listTransitions'
  | 'listWebhookDeliveries'
  | 'readEvents'
  | 'waitForEvents'
  | 'memoryStore'
  | 'memoryHistory'
  | 'queueCounts'
  | 'findProblems'
  | 'listTranscripts'
  | 'readTranscript'
  | 'search'
>;

/** The memory store `memoryStore(projectId)` returns (a `RedisMemoryStore`, with history). */
export type DashboardMemoryStore = Awaited<ReturnType<BatonControl['memoryStore']>>;

export type { EventEntry, FeatureFlip, ProjectEvent, ProjectRecord, ProjectStatus };
