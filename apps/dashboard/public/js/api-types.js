// The JSON the browser receives from the dashboard's API and streams, as JSDoc types for the
// modules beside this one (checked by tsconfig.public.json). Only comments: no module imports it
// at run time, so nothing here reaches the browser.
//
// The server's own types cannot be imported here: even @baton/projects/schema reaches the
// Anthropic SDK's types, and through them @types/node, whose globals (process, Buffer) would then
// pass the browser's check. So the shapes are written out here, and
// test/browser-types-match-the-server.test.ts (compiled by `pnpm typecheck` with the server's
// types) checks that each server type is assignable to the one here: a field the server renames,
// drops or retypes fails the typecheck. A type here may list fewer fields than the server sends:
// the ones the browser reads. The answers of the routes (`GET /api/...` and the streams' messages)
// go the other way too: the server names each one with its type here (`satisfies Browser.X` in
// src/internal/api.ts, memory-routes.ts and sse.ts, which read this file's declarations), so an
// answer's own fields are all listed, and renaming one on either side fails the typecheck.

/** @typedef {'queued' | 'running' | 'paused' | 'completed' | 'failed' | 'cancelled'} ProjectStatus */

/**
 * A context edit the API applied to a turn.
 * @typedef {{ type: string, cleared_input_tokens?: number, cleared_thinking_turns?: number, cleared_tool_uses?: number }} AppliedEdit
 */

/**
 * Token counts of a turn (`TurnUsage`).
 * @typedef {{ inputTokens: number, cacheReadInputTokens: number, cacheCreationInputTokens: number, outputTokens: number }} TurnUsage
 */

/**
 * Events of a project's stream as the server decodes them (`ProjectEvent` in @baton/projects):
 * the fields the page reads, per type; `unknown` is what the decoder makes of an unreadable one.
 * @typedef {{ at: number, sessionId: string }} SessionEventBase
 * @typedef {SessionEventBase & { type: 'session-start', sessionNumber: number, kind: string, interrupted: boolean, model: string }
 *   | SessionEventBase & { type: 'turn', turn: number, stopReason: string, durationMs: number, usage: TurnUsage, appliedEdits: Array<{ type: string }>, clearedInputTokens: number }
 *   | SessionEventBase & { type: 'model-fallback', from: string, to: string, turn: number }
 *   | SessionEventBase & { type: 'tool-call', turn: number, tool: string, summary: string, isError: boolean, limit?: string | undefined }
 *   | SessionEventBase & { type: 'mcp-server', server: string, source: string, transport: string, state: string, tools: string[], message?: string | undefined }
 *   | SessionEventBase & { type: 'memory-change', change: { command: string, path: string, newPath?: string | undefined, bytes: number } }
 *   | SessionEventBase & { type: 'context-full', turn: number, promptTokens: number | null, contextWindow: number | null }
 *   | SessionEventBase & { type: 'empty-reply', turn: number, nudged: boolean }
 *   | SessionEventBase & { type: 'api-retry', attempt: number, status?: number | undefined, delayMs: number }
 *   | SessionEventBase & { type: 'session-end', result: { outcome: string, reason: string, turns: number, featuresAfter: FeatureCounts } }
 *   | SessionEventBase & { type: 'checkpoint' | 'guidance-delivered' | 'check-passed' | 'check-failed' | 'feature-regressed' }
 *   | { at: number, type: 'project-status', from: ProjectStatus | null, to: ProjectStatus, reason: string | null }
 *   | { at: number, type: 'session-queued', sessionNumber: number, reason: string }
 *   | { at: number, type: 'session-interrupted' | 'session-claimed', sessionNumber: number, workerId: string }
 *   | { at: number, type: 'session-released', sessionNumber: number, outcome: string }
 *   | { at: number, type: 'webhook-delivery', webhookType: string, target: string, ok: boolean, attempts: number, status?: number | undefined, error?: string | undefined }
 *   | { at: number, type: 'project-paused' | 'guidance-sent' | 'workspace-prepared' | 'memory-snapshot' }
 *   | { at: number, type: 'unknown', originalType: string | null, problem: string }} ProjectEvent
 */

/**
 * @template {ProjectEvent['type']} T
 * @typedef {Extract<ProjectEvent, { type: T }>} ProjectEventOf
 */

/** @typedef {{ passing: number, total: number }} FeatureCounts */

/**
 * One project as lists, streams and its own page show it (`projectView`). `goal` is an excerpt
 * except on `GET /api/projects/:id` (`goalTruncated` says which).
 * @typedef {object} ProjectView
 * @property {string} id
 * @property {string} goal
 * @property {boolean} goalTruncated
 * @property {string} status
 * @property {string | null} statusReason
 * @property {number} createdAt
 * @property {string | null} model
 * @property {string | null} fallbackModel
 * @property {{ summary: string }} context
 * @property {string | null} repo
 * @property {string | null} base
 * @property {string | null} baseCommit
 * @property {string} branch
 * @property {string | null} lastCheckpoint
 * @property {boolean} skipHooks
 * @property {{ reason: string, lastGood: string | null } | null} checkpointFailure
 * @property {FeatureCounts} features
 * @property {number} sessions
 * @property {{ sessionId: string, number: number, turn: number | null, startedAt: number } | null} currentSession
 * @property {number} lastActivityAt
 * @property {{ input: number, uncached: number, cacheRead: number, cacheWrite: number, cacheHitRate: number, output: number, cleared: number }} tokens
 * @property {number} costUsd
 * @property {string | null} lastError
 * @property {{ mode: 'bubblewrap' | 'off' | null, summary: string, allowedHosts: string[] }} sandbox
 * @property {Array<{ name: string, type: 'stdio' | 'http' }>} mcpServers
 */

/**
 * A finished session's summary (`SessionSummary` in @baton/projects).
 * @typedef {object} SessionSummary
 * @property {string} sessionId
 * @property {number} sessionNumber
 * @property {string} kind
 * @property {string} outcome
 * @property {string} reason
 * @property {boolean} interrupted
 * @property {number} turns
 * @property {number} inputTokens
 * @property {number} cacheReadInputTokens
 * @property {number} cacheCreationInputTokens
 * @property {number} outputTokens
 * @property {number} clearedInputTokens
 * @property {number} costUsd
 * @property {FeatureCounts} featuresAfter
 * @property {number} startedAt
 * @property {number} endedAt
 * @property {string[]} commits
 * @property {string} model
 * @property {{ head: string | null, pushed: boolean, error?: string | undefined } | undefined} [checkpoint]
 * @property {string | undefined} [checkpointError]
 * @property {number} [checkpointFailures]
 * @property {Array<{ server: string, state: string, tools: number, message?: string | undefined }> | undefined} [mcp]
 */

/**
 * @typedef {object} StatusTransition
 * @property {number} at
 * @property {ProjectStatus | null} from
 * @property {ProjectStatus} to
 * @property {string | null} reason
 */

/**
 * One webhook delivery outcome (`WebhookDeliveryRecord`).
 * @typedef {object} WebhookDelivery
 * @property {string} type
 * @property {string} target
 * @property {boolean} ok
 * @property {number} attempts
 * @property {number | undefined} [status]
 * @property {string | undefined} [error]
 * @property {number} at
 */

/** @typedef {{ id: string, event: ProjectEvent }} EventEntry */

/**
 * `GET /api/projects`.
 * @typedef {object} ProjectsPage
 * @property {ProjectView[]} projects
 * @property {string | null} nextCursor
 * @property {Partial<Record<string, number>>} counts
 * @property {number} total
 * @property {number} version
 */

/**
 * `GET /api/projects/:id`.
 * @typedef {object} ProjectDetail
 * @property {ProjectView} project
 * @property {SessionSummary[]} sessions
 * @property {number | null} sessionsBefore
 * @property {number} sessionsTotal
 * @property {object} budgets the project's budgets (`ProjectBudgets`)
 * @property {StatusTransition[]} transitions
 * @property {WebhookDelivery[]} webhooks
 */

/**
 * `POST /api/projects/:id/<resume|pause|cancel>` and `POST /api/projects`: the project after it.
 * @typedef {{ project: ProjectView }} ProjectAnswer
 */

/** `POST /api/projects`: the new project and its first session's job. @typedef {ProjectAnswer & { jobId: string }} CreatedProject */

/** `POST /api/projects/:id/say`. @typedef {{ guidance: { id: string, at: number, text: string } }} GuidanceAnswer */

/** `GET /api/projects/:id/sessions`. @typedef {{ sessions: SessionSummary[], before: number | null, total: number }} SessionsPage */

/** `GET /api/projects/:id/events`. @typedef {{ events: EventEntry[], lastEventId: string | null, before: string | null }} EventsPage */

/**
 * One turn of the token chart (`TurnPoint`).
 * @typedef {object} TurnPoint
 * @property {string} sessionId
 * @property {number | null} sessionNumber
 * @property {number} turn
 * @property {number} at
 * @property {number} inputTokens
 * @property {number} uncachedInputTokens
 * @property {number} cacheReadInputTokens
 * @property {number} cacheCreationInputTokens
 * @property {number} outputTokens
 * @property {number} clearedInputTokens
 * @property {string[]} edits
 */

/** `GET /api/projects/:id/tokens`. @typedef {{ turns: TurnPoint[], before: string | null }} TokensPage */

/**
 * `GET /api/projects/:id/checklist` (`ChecklistView`).
 * @typedef {object} ChecklistView
 * @property {'ok' | 'missing' | 'invalid'} state
 * @property {Array<{ id: string, description: string, steps: string[], passes: boolean, flippedInSession: number | null }>} rows
 * @property {number} passing
 * @property {number} total
 */

/**
 * A feature check's last run (`CheckEvidence` in @baton/session).
 * @typedef {object} CheckEvidence
 * @property {string} command
 * @property {boolean} passed
 * @property {number | null} exitCode
 * @property {'timeout' | 'not_started' | undefined} [stopped]
 * @property {number} durationMs
 * @property {string | undefined} [outputTail] left out in `GET /api/projects/:id/checks`
 * @property {string | null} commit
 * @property {number} at
 * @property {'flip' | 'regression'} trigger
 */

/**
 * One feature's row of the check report (`FeatureCheckRow`). In `GET /api/projects/:id/checks`
 * the evidence comes without its output tail; `GET …/checks/:feature` has it whole.
 * @typedef {object} CheckRow
 * @property {string} id
 * @property {string | null} check
 * @property {'verified' | 'claimed' | 'regressed' | 'refused' | 'unverified' | 'failing'} state
 * @property {CheckEvidence | null} evidence
 */

/**
 * `GET /api/projects/:id/checks` (`ProjectChecksReport`).
 * @typedef {object} CheckReport
 * @property {{ verified: number, claimed: number, regressed: number }} counts
 * @property {CheckRow[]} features
 */

/**
 * `GET /api/problems` (`ProjectProblems`).
 * @typedef {object} ProjectProblems
 * @property {Array<{ projectId: string, kind: 'stuck' | 'fragment' | 'orphan-job', problem: string, fix: string }>} problems
 * @property {string | null} incomplete
 */

/** `GET /api/presets`. @typedef {{ presets: Array<{ name: string, intent: string }>, default: string }} Presets */

/** Queue counts by job state (`GET /api/queue`, the projects stream). @typedef {Partial<Record<string, number>>} QueueCounts */

/** `GET /api/queue`. @typedef {{ counts: QueueCounts }} QueueAnswer */

/**
 * `GET /api/projects/:id/diff`.
 * @typedef {object} BranchDiff
 * @property {string} branch
 * @property {string | null} head
 * @property {string | null} base
 * @property {string | null} baseCommit
 * @property {unknown[]} commits
 * @property {string} text
 * @property {boolean} truncated
 */

/**
 * One search hit (`SearchHit` in @baton/session).
 * @typedef {{ source: 'memory', path: string, line: number, snippet: string }
 *   | { source: 'transcript', sessionId: string, sessionNumber: number, turn: number, role: 'user' | 'assistant', block: string, textSource?: string, snippet: string }} SearchHit
 */

/** `GET /api/projects/:id/search`. @typedef {{ query: string, hits: SearchHit[], truncated: boolean }} SearchAnswer */

/**
 * `GET /api/projects/:id/progress`: the whole log (archives first) as `markdown` and `html`.
 * @typedef {{ path: string, archives: string[], exists: boolean, markdown: string, html: string }} ProgressAnswer
 */

/** `GET /api/projects/:id/memory`. @typedef {{ files: Array<{ path: string, kind: string, size: number }>, usage: { bytes: number, files: number } }} MemoryList */

/** `GET /api/projects/:id/memory/file`. @typedef {{ path: string, content: string, truncated: boolean, html: string | null }} MemoryFile */

/** @typedef {{ version: string, command: string, bytes: number, at: number, session?: string }} MemoryVersion */

/**
 * `GET /api/projects/:id/memory/history`: `versions` newest first, `changes` (what wrote them) oldest first.
 * @typedef {{ path: string, versions: MemoryVersion[], changes: Array<{ at: number, command: string, path: string, bytes: number, version: string, session?: string }> }} MemoryHistory
 */

/**
 * One line of a memory diff (`DiffLine`).
 * @typedef {{ op: 'equal' | 'insert' | 'delete', text: string }} DiffLine
 */

/**
 * `GET /api/projects/:id/memory/diff` (`LineDiff`) between two kept versions (`null`: empty before, the file now after).
 * @typedef {{ path: string, from: string | null, to: string | null, diff: { tooLarge: false, lines: DiffLine[], added: number, removed: number } | { tooLarge: true, message: string } }} MemoryDiff
 */

/** @typedef {{ kept: number, characters: number }} TranscriptCap */

/**
 * One content block of a transcript message (`TranscriptBlock`); model text comes rendered as
 * sanitised `html`.
 * @typedef {{ type: 'text', text: string, source: string, guidanceIds?: string[], html?: string }
 *   | { type: 'tool_use', id: string, name: string, input: unknown, capped?: TranscriptCap | undefined }
 *   | { type: 'tool_result', toolUseId: string, isError: boolean, content: string, capped?: TranscriptCap | undefined }
 *   | { type: 'thinking', thinking: string }
 *   | { type: 'other', blockType: string }} TranscriptBlock
 */

/**
 * @typedef {object} TranscriptMessage
 * @property {'user' | 'assistant'} role
 * @property {number} turn
 * @property {'work' | 'end'} phase
 * @property {TranscriptBlock[]} content
 * @property {true} [unsent]
 * @property {string} [stopReason]
 * @property {TurnUsage} [usage]
 * @property {number} [costUsd]
 * @property {AppliedEdit[]} [appliedEdits]
 */

/**
 * `GET /api/projects/:id/transcripts`: the kept transcripts, newest first.
 * @typedef {{ transcripts: Array<Pick<Transcript, 'sessionNumber' | 'kind' | 'model' | 'interrupted' | 'startedAt' | 'end'> & { sessionId: string, messageCount: number }> }} TranscriptList
 */

/** `GET /api/projects/:id/transcripts/:sessionId`. @typedef {{ transcript: Transcript }} TranscriptAnswer */

/**
 * `GET /api/projects/:id/transcripts/:sessionId`'s `transcript`.
 * @typedef {object} Transcript
 * @property {number} sessionNumber
 * @property {string} kind
 * @property {string} model
 * @property {boolean} interrupted
 * @property {number} startedAt
 * @property {{ outcome: string, reason: string, stopReason?: string | undefined, turns: number, costUsd: number } | null} end
 * @property {TranscriptMessage[]} messages
 */

/**
 * The projects stream's `snapshot`.
 * @typedef {{ counts: Partial<Record<string, number>>, total: number, version: number, queue: QueueCounts | null, at: number }} ProjectsSnapshot
 */

/** The projects stream's `counts`. @typedef {{ counts: Partial<Record<string, number>>, total: number }} FleetCounts */

/**
 * A project stream's `snapshot`.
 * @typedef {object} ProjectSnapshot
 * @property {ProjectView} project
 * @property {SessionSummary[]} sessions
 * @property {number | null} sessionsBefore
 * @property {EventEntry[]} events
 * @property {string | null} [lastEventId] the last of `events` (a first connection)
 * @property {string} [resumedFrom] the `Last-Event-ID` the stream goes on after (a reconnection)
 */

/** Both streams' `removed`. @typedef {{ id: string }} Removed */

export {};
