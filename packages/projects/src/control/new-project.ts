/** What `createProject` stores: the checked input with its source resolved and its context merged. */
import {
  ContextConfigError,
  DEFAULT_CONTEXT_PRESET,
  defineContextConfig,
  loadContextConfigInput,
  type ContextConfigInput,
} from '@baton/context-config';
import {
  WorkspaceError,
  checkWorkspaceDir,
  projectBranch,
  resolveProjectSource,
} from '@baton/workspace';
import { ProjectError } from '../errors.js';
import type { ProjectContextPreset, ProjectInput } from '../project.js';
import type { NewProjectRecord } from '../project-log.js';
import type { SourcePolicy } from '../source-policy.js';

/** What creation reads of the control's options (`BatonControlOptions`). */
export interface NewProjectOptions {
  cwd?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  repoTimeoutMs?: number | undefined;
}

/**
 * The record of a new project: its workspace checked and its repository resolved (the branch
 * Baton already pushed for this id, if any, becomes its last checkpoint). A workspace or
 * repository that does not answer is `invalid_input` naming it.
 */
export async function newProjectRecord(
  parsed: ProjectInput,
  context: ContextConfigInput,
  policy: SourcePolicy,
  options: NewProjectOptions,
): Promise<NewProjectRecord> {
  let source = null;
  if (parsed.workspace !== undefined) {
    try {
      await checkWorkspaceDir(parsed.workspace, { adopt: parsed.adoptWorkspace === true });
    } catch (error) {
      if (error instanceof WorkspaceError) {
        throw new ProjectError('invalid_input', error.message, { cause: error });
      }
      throw error;
    }
  }
  if (parsed.repo !== undefined) {
    try {
      source = await resolveProjectSource({
        repo: parsed.repo,
        base: parsed.base,
        projectId: parsed.id,
        cwd: options.cwd,
        timeoutMs: options.repoTimeoutMs,
      });
    } catch (error) {
      if (error instanceof WorkspaceError) {
        throw new ProjectError('invalid_input', policy.describeRepoFailure(parsed.repo, error), {
          cause: error,
        });
      }
      throw error;
    }
  }
  return {
    id: parsed.id,
    goal: parsed.goal,
    workspace: parsed.workspace ?? null,
    adoptWorkspace: parsed.adoptWorkspace === true,
    repo: source?.repo ?? null,
    base: source?.base ?? null,
    baseCommit: source?.baseCommit ?? null,
    branch: projectBranch(parsed.id),
    skipHooks: parsed.skipHooks === true,
    lastCheckpoint: source?.existingHead ?? null,
    model: parsed.model ?? null,
    fallbackModel: parsed.fallbackModel ?? null,
    budgets: parsed.budgets ?? {},
    contextPreset: context.preset ?? DEFAULT_CONTEXT_PRESET,
    context,
    sandbox: parsed.sandbox ?? null,
    verification: parsed.verification ?? null,
    mcp: parsed.mcp,
    createdAt: Date.now(),
  };
}

/**
 * The context config a new project stores (`createProject`, `baton run` creating a local one):
 * the creator's `baton.config.json` and `BATON_CONTEXT_*`, under the input's own context and
 * preset; a bad layer is `invalid_input` naming it.
 */
export async function projectContext(
  input: { context?: ContextConfigInput; contextPreset?: ContextConfigInput['preset'] | undefined },
  options: NewProjectOptions,
): Promise<ContextConfigInput> {
  const override: ContextConfigInput = {
    ...input.context,
    // A merge: an absent preset keeps `context.preset`, and `Object.keys(override)` below counts keys.
    // eslint-disable-next-line no-restricted-syntax -- a merge over input.context, read by Object.keys
    ...(input.contextPreset === undefined ? {} : { preset: input.contextPreset }),
  };
  let loaded: ContextConfigInput;
  try {
    loaded = await loadContextConfigInput({
      cwd: options.cwd ?? process.cwd(),
      env: options.env ?? process.env,
      ...(Object.keys(override).length === 0 ? {} : { override }),
    });
  } catch (error) {
    if (!(error instanceof ContextConfigError)) throw error;
    throw new ProjectError(
      'invalid_input',
      `invalid context config: ${error.issues.map((issue) => `${issue.source === 'override' ? 'context' : issue.source}: ${issue.path}: ${issue.message}`).join('; ')}`,
      { cause: error },
    );
  }
  // The preset is written out so the record says what it runs without knowing the default.
  return { preset: loaded.preset ?? DEFAULT_CONTEXT_PRESET, ...loaded };
}

/**
 * A stored context config with its preset replaced (`baton run --project ID --preset P`), the way
 * a later layer's preset replaces an earlier one (the config's own groups stay); a combination
 * `defineContextConfig` refuses is `invalid_input`.
 */
export function withContextPreset(
  context: ContextConfigInput,
  preset: ProjectContextPreset,
): ContextConfigInput {
  const replaced = { ...context, preset };
  try {
    defineContextConfig(replaced);
  } catch (error) {
    if (!(error instanceof ContextConfigError)) throw error;
    throw new ProjectError(
      'invalid_input',
      `invalid context config: preset ${preset} over the stored config: ${error.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`,
      { cause: error },
    );
  }
  return replaced;
}
