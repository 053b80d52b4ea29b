import type { z } from 'zod';
import type { ContextConfigIssue } from '../errors.js';

type PathSegment = PropertyKey;

/** `['clearToolUses', 'exclude_tools', 1]` -> `clearToolUses.exclude_tools[1]`. */
export function formatPath(path: readonly PathSegment[]): string {
  let result = '';
  for (const segment of path) {
    if (typeof segment === 'number') result += `[${segment}]`;
    else result += result === '' ? String(segment) : `.${String(segment)}`;
  }
  return result;
}

interface RawIssue {
  code: string;
  path: PathSegment[];
  message: string;
  keys?: string[];
  errors?: RawIssue[][];
}

/** A branch failed "at the door" (wrong type or literal) rather than inside a matching shape. */
function failedAtRoot(branch: readonly RawIssue[]): boolean {
  return branch.every(
    (issue) =>
      issue.path.length === 0 && (issue.code === 'invalid_type' || issue.code === 'invalid_value'),
  );
}

/**
 * Turns zod issues into one issue per problem with a readable path. Unions report the branch
 * the value was evidently meant for (the one that failed deeper than its type), so a user sees
 * `clearToolUses.keep.value: must not be negative` instead of "no union member matched".
 */
export function toIssues(
  issues: readonly z.core.$ZodIssue[],
  prefix: readonly PathSegment[],
  source: string,
): ContextConfigIssue[] {
  const result: ContextConfigIssue[] = [];
  const visit = (issue: RawIssue, base: readonly PathSegment[]): void => {
    const path = [...base, ...issue.path];
    if (issue.code === 'unrecognized_keys' && issue.keys !== undefined) {
      for (const key of issue.keys) {
        result.push({ path: formatPath([...path, key]), message: issue.message, source });
      }
      return;
    }
    if (issue.code === 'invalid_union' && issue.errors !== undefined && issue.errors.length > 0) {
      const meant = issue.errors.filter((branch) => branch.length > 0 && !failedAtRoot(branch));
      if (meant.length === 1 && meant[0] !== undefined) {
        for (const inner of meant[0]) visit(inner, path);
        return;
      }
    }
    result.push({ path: formatPath(path), message: issue.message, source });
  };
  for (const issue of issues) visit(issue as unknown as RawIssue, prefix);
  return result;
}
