import { FEATURES_PATH, parseFeatures, type Feature } from './features.js';

/** Options of the checklist rules. */
export interface ChecklistRuleOptions {
  /** Allow appending new features after the existing ones (the init session builds the list). Default false. */
  allowAdditions?: boolean;
}

/** The rule, as the model reads it in every refusal. */
export const CHECKLIST_RULE =
  `Rule: ${FEATURES_PATH} is the project's fixed scope. After it is written at initialisation, ` +
  'features may never be removed, reordered or rewritten: only the "passes" field of a feature ' +
  'may change (set it to true only after an end-to-end check proved the feature works; Baton ' +
  'runs the feature\'s "check" command before it accepts the flip). The file must stay a JSON ' +
  'array of {"id", "description", "steps", "check" (optional), "passes"} objects.';

function sameSteps(left: readonly string[], right: readonly string[]): boolean {
  return left.length === right.length && left.every((step, index) => step === right[index]);
}

/**
 * Checks one write of features.json. Returns `null` when allowed, otherwise the refusal message
 * the model receives (what was wrong, then the rule).
 * `before === null` is a first creation: any valid checklist is allowed.
 */
export function checkChecklistWrite(
  before: string | null,
  after: string,
  options: ChecklistRuleOptions = {},
): string | null {
  const parsedAfter = parseFeatures(after);
  if (!parsedAfter.ok) {
    return `Refused: this write would leave ${FEATURES_PATH} invalid (${parsedAfter.problems.join('; ')}). Nothing was written. ${CHECKLIST_RULE}`;
  }
  if (before === null) return null;
  const parsedBefore = parseFeatures(before);
  // A checklist that is already broken may be repaired by any valid content.
  if (!parsedBefore.ok) return null;
  const problems = compareFeatures(parsedBefore.features, parsedAfter.features, options);
  if (problems.length === 0) return null;
  return `Refused: this write would ${problems.join('; ')}. Nothing was written. ${CHECKLIST_RULE}`;
}

function compareFeatures(
  before: readonly Feature[],
  after: readonly Feature[],
  options: ChecklistRuleOptions,
): string[] {
  const problems: string[] = [];
  const afterIds = new Set(after.map((feature) => feature.id));
  const removed = before
    .filter((feature) => !afterIds.has(feature.id))
    .map((feature) => feature.id);
  if (removed.length > 0) problems.push(`remove feature ${removed.join(', ')}`);
  before.forEach((old, index) => {
    const next = after[index];
    if (next === undefined || removed.includes(old.id)) return;
    if (next.id !== old.id) {
      problems.push(`change the id of feature #${index + 1} from "${old.id}" to "${next.id}"`);
      return;
    }
    if (next.description !== old.description) problems.push(`change the description of ${old.id}`);
    if (!sameSteps(next.steps, old.steps)) problems.push(`change the steps of ${old.id}`);
    // The check is what a flip is verified against: a model that could rewrite it could make
    // any claim pass.
    if (next.check !== old.check) {
      problems.push(
        old.check === undefined
          ? `add a check to ${old.id} after it was written`
          : next.check === undefined
            ? `remove the check of ${old.id}`
            : `change the check of ${old.id}`,
      );
    }
  });
  if (after.length > before.length && !options.allowAdditions) {
    const added = after.slice(before.length).map((feature) => feature.id);
    problems.push(`add feature ${added.join(', ')} after initialisation`);
  }
  return problems;
}
