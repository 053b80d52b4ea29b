import { readFile } from 'node:fs/promises';
import {
  MODEL_ID_RULE,
  PROJECT_ID_RULE,
  isValidProjectId,
  modelIdSchema,
} from '@baton/projects/schema';
import { InvalidArgumentError } from 'commander';
import { CliError } from '../errors.js';
import type { z } from 'zod';

/** Commander argument parsers: each throws `InvalidArgumentError` with a short reason (printed as one line). */

export function parsePositiveInteger(max: number) {
  return (value: string): number => {
    const number = Number(value);
    if (
      !/^\d+$/.test(value.trim()) ||
      !Number.isSafeInteger(number) ||
      number < 1 ||
      number > max
    ) {
      throw new InvalidArgumentError(`expected a whole number from 1 to ${max}.`);
    }
    return number;
  };
}

/**
 * A budget or limit by its rule in `@baton/projects` (`PROJECT_BUDGET_RULES`,
 * `SESSION_BUDGET_RULES`): the flag accepts exactly what the project schema stores, and says the
 * rule's own words when it does not.
 */
export function parseBudget(rule: z.ZodType<number>) {
  return (value: string): number => {
    const text = value.trim();
    const parsed = rule.safeParse(text === '' ? Number.NaN : Number(text));
    if (!parsed.success) {
      throw new InvalidArgumentError(`${parsed.error.issues[0]?.message ?? 'is not valid'}.`);
    }
    return parsed.data;
  };
}

/** The one project-id rule (`@baton/projects`), so a local and a Redis project accept the same ids. */
export function parseProjectId(value: string): string {
  if (!isValidProjectId(value)) throw new InvalidArgumentError(`a project id ${PROJECT_ID_RULE}.`);
  return value;
}

/** The one model-id rule (`@baton/projects`), as the project schema checks it. */
export function parseModelId(value: string): string {
  const parsed = modelIdSchema.safeParse(value);
  if (!parsed.success) throw new InvalidArgumentError(`${MODEL_ID_RULE}.`);
  return parsed.data;
}

export function parsePort(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || number > 65_535)
    throw new InvalidArgumentError('expected a port from 0 to 65535.');
  return number;
}

export function parseNonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty.');
  return value;
}

/**
 * A JSON file given on the command line (`--mcp-config`), parsed but not validated: the control
 * API validates it with the project schema. One usage line when it cannot be read or parsed.
 */
export async function readJsonFile(file: string, flag = '--mcp-config'): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(
      'usage',
      `cannot read ${flag} ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new CliError('usage', `${flag} ${file} is not valid JSON`);
  }
}

/** Collects repeated `--allow-host` values. */
export function collectAllowedHost(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
