/**
 * Guidance from the operator (`baton say`): short texts that reach a running session at its next
 * model turn, and the next session's first message while no session has acknowledged them.
 */

/** One message from the operator. */
export interface OperatorGuidance {
  /** Unique id (kept in the transcript and the events). */
  id: string;
  /** When the operator sent it (ms since the epoch). */
  at: number;
  text: string;
}

/** Where a session reads the operator's guidance. The worker's lives in Redis (`@baton/projects`). */
export interface GuidanceSource {
  /** Guidance no session has acknowledged yet, oldest first. */
  pending(): Promise<readonly OperatorGuidance[]>;
  /**
   * A response answered a request that carried these ids: the model has seen them, so no later
   * session needs them repeated.
   */
  acknowledge(ids: readonly string[], by: { sessionId: string; turn: number }): Promise<void>;
}

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** One `<operator_guidance>` block per message: a user text block marked as operator guidance. */
export function renderGuidance(entries: readonly OperatorGuidance[]): string {
  return entries
    .map(
      (entry) =>
        `<operator_guidance id="${escapeText(entry.id)}" sent="${new Date(entry.at).toISOString()}">\n` +
        `${escapeText(entry.text.trim())}\n</operator_guidance>`,
    )
    .join('\n');
}

/** The first-message section carrying guidance earlier sessions did not acknowledge. */
export function renderUnacknowledgedGuidance(entries: readonly OperatorGuidance[]): string {
  if (entries.length === 0) return '';
  return (
    'Guidance from the operator that no earlier session acknowledged. Follow it where it applies; ' +
    'it overrides your notes where they disagree.\n' +
    renderGuidance(entries)
  );
}
