import type { MemoryChange, MemoryStore } from '@baton/core';
import { redactSecrets } from '@baton/core';
import {
  type CommandSandbox,
  DEFAULT_SANDBOX_SETUP,
  type SandboxSetup,
  openCommandSandbox,
} from '@baton/workspace';
import {
  FEATURES_PATH,
  FEATURES_STORE_PATH,
  type Feature,
  formatFeatures,
  parseFeatures,
  readFeatures,
} from '../features.js';
import { appendProgressEntry } from './progress-gap.js';
import {
  type CheckEvidence,
  type CheckTrigger,
  DEFAULT_CHECK_TIMEOUT_MS,
  DEFAULT_REGRESSION_BUDGET_MS,
  DEFAULT_REGRESSION_CHECKS_PER_SESSION,
  FEATURE_ID_VARIABLE,
  type FeatureChecks,
  type VerificationOptions,
  describeEvidence,
  effectiveCheck,
  outputTail,
} from '../verification.js';
import type { EventBody } from './events.js';

/** Keeps the last part of a stream of output, enough for a tail. */
class TailBuffer {
  #text = '';
  readonly #max: number;
  constructor(max: number) {
    this.#max = max;
  }
  push(chunk: string): void {
    this.#text += chunk;
    if (this.#text.length > 2 * this.#max) this.#text = this.#text.slice(-this.#max);
  }
  get text(): string {
    return this.#text;
  }
}

export interface FeatureVerifierOptions {
  /** Realpath of the workspace: checks run there. */
  root: string;
  sandbox?: SandboxSetup | undefined;
  /** Baton's git directory, shown read-only as for bash. */
  gitDir?: string | undefined;
  /** Extra environment of every command (the bash tool's `env`). */
  env?: Record<string, string> | undefined;
  verification: VerificationOptions;
  sessionId: string;
  sessionNumber: number;
  /** The commit the workspace is at now (after any checkpoint due), `null` when unknown. */
  commit: () => Promise<string | null>;
  emit: (body: EventBody) => Promise<void>;
}

/** What Baton says about a flip: accepted (with a note for the model), or refused (why). */
export type FlipVerdict =
  { accepted: true; note: string; commit(): void } | { accepted: false; message: string };

/** What the end-of-session re-run did. */
export interface RegressionPass {
  ran: number;
  regressed: string[];
  /** Time spent in checks, ms. */
  durationMs: number;
  /** Memory changes Baton made (flips back, its progress entry). */
  changes: MemoryChange[];
}

/**
 * Runs features' checks in the session's sandbox and keeps the record: before a flip to
 * `passes: true` is accepted, and at the end of the session for passing features.
 */
export class FeatureVerifier {
  readonly checks: FeatureChecks;
  readonly #options: FeatureVerifierOptions;
  readonly #timeoutMs: number;
  #sandbox: Promise<CommandSandbox> | undefined;

  constructor(options: FeatureVerifierOptions) {
    this.#options = options;
    this.checks = { ...options.verification.previous };
    this.#timeoutMs = options.verification.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  }

  get defaultCheck(): string | undefined {
    return this.#options.verification.defaultCheck;
  }

  /**
   * Verifies the features a write would flip to passing (`ids`, in `after`, the checklist the
   * write would leave). Every check must pass for the write to be accepted.
   */
  async verifyFlips(ids: readonly string[], after: readonly Feature[]): Promise<FlipVerdict> {
    const byId = new Map(after.map((feature) => [feature.id, feature]));
    const claimed: string[] = [];
    const results: CheckEvidence[] = [];
    const commit = await this.#options.commit();
    for (const id of ids) {
      const feature = byId.get(id);
      const command =
        feature === undefined ? undefined : effectiveCheck(feature, this.defaultCheck);
      if (command === undefined) {
        if (this.#options.verification.requireChecks === true) {
          return {
            accepted: false,
            message:
              `Refused: ${id} has no "check" and this project requires one for every flip ` +
              `(--require-checks), so Baton cannot verify it. ${id} stays failing and nothing ` +
              'was written. Tell the operator in your progress entry; a check cannot be added after initialisation.',
          };
        }
        claimed.push(id);
        continue;
      }
      const evidence = await this.#run(id, command, commit, 'flip', this.#timeoutMs);
      results.push(evidence);
      if (!evidence.passed) {
        this.checks[id] = { status: 'refused', evidence };
        const tail = evidence.outputTail === '' ? '(no output)' : evidence.outputTail;
        return {
          accepted: false,
          message:
            `Refused: Baton ran the check of ${id} (\`${command}\`) and it ${describeEvidence(evidence)}. ` +
            `${id} stays failing and nothing was written. Fix the work, run the check yourself, then flip it again. ` +
            `Last lines of its output:\n${tail}`,
        };
      }
    }
    const notes = [
      ...results.map(
        (evidence) =>
          `Baton ran the check of ${evidence.featureId} (\`${evidence.command}\`): ${describeEvidence(evidence)}. The flip is verified.`,
      ),
      ...claimed.map(
        (id) => `${id} has no check: Baton accepted the flip as claimed (not verified).`,
      ),
    ];
    return {
      accepted: true,
      note: notes.join('\n'),
      commit: () => {
        for (const evidence of results) {
          this.checks[evidence.featureId] = { status: 'verified', evidence };
        }
        for (const id of claimed) this.checks[id] = { status: 'claimed', evidence: null };
      },
    };
  }

  /**
   * Re-runs the checks of passing features not yet verified on `commit`, least recently verified
   * first, within the budget and `regressionChecksPerSession` (all of them when every feature
   * passes); a failing one is flipped back to failing.
   */
  async regressionPass(store: MemoryStore, commit: string | null): Promise<RegressionPass> {
    const started = Date.now();
    const pass: RegressionPass = { ran: 0, regressed: [], durationMs: 0, changes: [] };
    const features = await readFeatures(store);
    if (features === null) return pass;
    const everyFeaturePasses = features.length > 0 && features.every((feature) => feature.passes);
    const budget = this.#options.verification.regressionBudgetMs ?? DEFAULT_REGRESSION_BUDGET_MS;
    const most =
      this.#options.verification.regressionChecksPerSession ??
      DEFAULT_REGRESSION_CHECKS_PER_SESSION;
    const due = features
      .map((feature, index) => ({ feature, index }))
      .filter(({ feature }) => feature.passes)
      .filter(({ feature }) => effectiveCheck(feature, this.defaultCheck) !== undefined)
      .filter(({ feature }) => {
        const evidence = this.checks[feature.id]?.evidence;
        return !(evidence?.passed === true && commit !== null && evidence.commit === commit);
      })
      .sort(
        (left, right) =>
          (this.checks[left.feature.id]?.evidence?.at ?? 0) -
            (this.checks[right.feature.id]?.evidence?.at ?? 0) || left.index - right.index,
      );
    for (const { feature } of due) {
      const left = budget - (Date.now() - started);
      if (!everyFeaturePasses && (left <= 0 || pass.ran >= most)) break;
      const timeout = everyFeaturePasses ? this.#timeoutMs : Math.min(this.#timeoutMs, left);
      const command = effectiveCheck(feature, this.defaultCheck) ?? '';
      const evidence = await this.#run(feature.id, command, commit, 'regression', timeout);
      // Cut short by the budget, not by its own timeout: no verdict, it runs first next time.
      if (evidence.stopped === 'timeout' && timeout < this.#timeoutMs) break;
      pass.ran += 1;
      if (evidence.passed) {
        this.checks[feature.id] = { status: 'verified', evidence };
        continue;
      }
      this.checks[feature.id] = { status: 'regressed', evidence };
      const change = await this.#flipBack(store, feature.id);
      if (change !== null) pass.changes.push(change);
      pass.regressed.push(feature.id);
      await this.#options.emit({ type: 'feature-regressed', featureId: feature.id, evidence });
    }
    if (pass.regressed.length > 0) {
      const change = await this.#logRegressions(store, pass.regressed).catch(() => null);
      if (change !== null) pass.changes.push(change);
    }
    pass.durationMs = Date.now() - started;
    return pass;
  }

  /** Ends the checks' sandbox. Never throws. */
  async dispose(): Promise<void> {
    const opened = this.#sandbox;
    this.#sandbox = undefined;
    if (opened !== undefined) await (await opened.catch(() => undefined))?.dispose();
  }

  async #run(
    featureId: string,
    command: string,
    commit: string | null,
    trigger: CheckTrigger,
    timeoutMs: number,
  ): Promise<CheckEvidence> {
    const tail = new TailBuffer(8_000);
    let exitCode: number | null = null;
    let stopped: CheckEvidence['stopped'];
    let durationMs = 0;
    try {
      this.#sandbox ??= openCommandSandbox({
        workspace: this.#options.root,
        setup: this.#options.sandbox ?? DEFAULT_SANDBOX_SETUP,
        gitDir: this.#options.gitDir,
      });
      const sandbox = await this.#sandbox;
      const result = await sandbox.run(command, {
        env: { ...this.#options.env, [FEATURE_ID_VARIABLE]: featureId },
        timeoutMs,
        onOutput: (chunk) => tail.push(chunk),
      });
      exitCode = result.exitCode;
      durationMs = result.durationMs;
      if (result.startError !== undefined) {
        stopped = 'not_started';
        tail.push(`\n${result.startError}`);
      } else if (result.stopped !== undefined) stopped = 'timeout';
    } catch {
      this.#sandbox = undefined;
      stopped = 'not_started';
      tail.push('the check could not be sandboxed on this worker');
    }
    const evidence: CheckEvidence = {
      featureId,
      command,
      passed: stopped === undefined && exitCode === 0,
      exitCode,
      stopped,
      durationMs,
      outputTail: outputTail(redactSecrets(tail.text).text),
      commit,
      at: Date.now(),
      trigger,
      sessionId: this.#options.sessionId,
    };
    await this.#options.emit({
      type: evidence.passed ? 'check-passed' : 'check-failed',
      evidence,
    });
    return evidence;
  }

  /** Baton's own write: `passes` back to false for `id`, nothing else changed. */
  async #flipBack(store: MemoryStore, id: string): Promise<MemoryChange | null> {
    try {
      const { after } = await store.edit(
        FEATURES_STORE_PATH,
        (current) => {
          const parsed = parseFeatures(current);
          if (!parsed.ok) return current;
          return formatFeatures(
            parsed.features.map((feature) =>
              feature.id === id ? { ...feature, passes: false } : feature,
            ),
          );
        },
        { command: 'str_replace', session: this.#options.sessionId },
      );
      return {
        command: 'str_replace',
        path: FEATURES_PATH,
        bytes: Buffer.byteLength(after),
        at: Date.now(),
        session: this.#options.sessionId,
      };
    } catch {
      return null;
    }
  }

  /** A progress entry written by Baton, so the log says why a feature is failing again. */
  async #logRegressions(store: MemoryStore, ids: readonly string[]): Promise<MemoryChange> {
    const lines = [
      `## Session ${this.#options.sessionNumber} (written by Baton: regression check)`,
      ...ids.map((id) => {
        const evidence = this.checks[id]?.evidence;
        const firstLine = evidence?.outputTail.split('\n').filter((line) => line.trim())[0] ?? '';
        return `- ${id} regressed: its check \`${evidence?.command ?? '?'}\` ${evidence === undefined || evidence === null ? 'failed' : describeEvidence(evidence)}${firstLine === '' ? '' : `: ${firstLine.slice(0, 200)}`}. Baton set it back to failing; fix it first.`;
      }),
    ];
    return appendProgressEntry(store, lines.join('\n'), this.#options.sessionId);
  }
}
