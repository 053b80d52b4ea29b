import Anthropic from '@anthropic-ai/sdk';
import { isSimulatedModel } from '@baton/context-config';
import { startModelSim, type ModelSim } from '@baton/model-sim';
import { MODEL_ID_RULE, modelIdSchema } from '@baton/projects/schema';
import { CliError } from '../errors.js';
import { CLI_ENV_VARIABLES } from './environment.js';

/** Default model for the real API when neither `--model` nor `BATON_MODEL` is set. */
const DEFAULT_MODEL = 'claude-sonnet-4-6';

/** The client a command uses, and the simulator it started (if any). */
export interface ModelConnection {
  client: Anthropic;
  model: string;
  sim: ModelSim | undefined;
  /** `BATON_FALLBACK_MODEL`: where a session goes when `model` stays overloaded; undefined = none. */
  fallbackModel: string | undefined;
  /** One line for the user, e.g. "No ANTHROPIC_API_KEY: using the built-in simulator at ...". */
  notice: string;
}

/**
 * `ANTHROPIC_API_KEY` (+ optional `ANTHROPIC_BASE_URL`) -> the real API with `BATON_MODEL` or
 * `--model`. The model `sim` (or `sim-sonnet`, the simulator at Sonnet's prices), or no key and no
 * model named, -> an in-process simulator (recorded as `sim`, priced at 0). A real model named without a key is refused (usage, exit 2), as the
 * worker refuses it. The SDK's own retries are
 * off: @baton/session retries itself and reports every retry as an event.
 */
export async function connectModel(options: {
  model?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}): Promise<ModelConnection> {
  const env = options.env ?? process.env;
  const fallbackModel = fallbackModelFrom(env);
  const apiKey = env.ANTHROPIC_API_KEY?.trim();
  const requested = options.model ?? (env[CLI_ENV_VARIABLES.model]?.trim() || undefined);
  refuseModelWithoutKey(options);
  if (apiKey === undefined || apiKey === '' || isSimulatedModel(requested)) {
    const sim = await startModelSim({ port: 0 });
    const client = new Anthropic({ apiKey: 'sim', baseURL: sim.url, maxRetries: 0 });
    const why = apiKey ? `model "${requested}" requested` : 'no ANTHROPIC_API_KEY set';
    return {
      client,
      model: requested ?? 'sim',
      sim,
      fallbackModel,
      notice: `Using the built-in model simulator (${why}) at ${sim.url}.`,
    };
  }
  const baseURL = env.ANTHROPIC_BASE_URL?.trim();
  const client = new Anthropic({ apiKey, maxRetries: 0, baseURL: baseURL || undefined });
  const model = requested ?? DEFAULT_MODEL;
  return {
    client,
    model,
    sim: undefined,
    fallbackModel,
    notice: `Using the Anthropic API${baseURL ? ` at ${baseURL}` : ''} with model ${model}.`,
  };
}

/**
 * A real model named (`--model` or `BATON_MODEL`) without `ANTHROPIC_API_KEY` is a usage error:
 * the simulator never runs under a real model's name and price. Callers run this before they
 * create or change a project (`baton run` continuing a project without --model reads its stored
 * model first, after BATON_HOME's files are opened and upgraded).
 */
export function refuseModelWithoutKey(options: {
  model?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}): void {
  const env = options.env ?? process.env;
  const apiKey = env.ANTHROPIC_API_KEY?.trim();
  const requested = options.model ?? (env[CLI_ENV_VARIABLES.model]?.trim() || undefined);
  if (
    (apiKey === undefined || apiKey === '') &&
    requested !== undefined &&
    !isSimulatedModel(requested)
  ) {
    throw new CliError(
      'usage',
      `ANTHROPIC_API_KEY is not set: model ${JSON.stringify(requested)} needs it; set it, or choose the simulator with --model sim`,
    );
  }
}

/** `BATON_FALLBACK_MODEL`, checked like every model id; a bad one is a usage error. */
function fallbackModelFrom(env: NodeJS.ProcessEnv): string | undefined {
  const value = env[CLI_ENV_VARIABLES.fallbackModel]?.trim();
  if (value === undefined || value === '') return undefined;
  if (!modelIdSchema.safeParse(value).success) {
    throw new CliError(
      'usage',
      `BATON_FALLBACK_MODEL ${MODEL_ID_RULE}, got ${JSON.stringify(value)}.`,
    );
  }
  return value;
}
