/**
 * What an operator does to a project while it runs, beside cancel: pause it and send it guidance.
 * The control API (`pause`, `say`) and the worker both read these rules from here.
 */

/** The status reason of a project an operator paused (budget pauses say `budget: ...`). */
export const OPERATOR_PAUSE_REASON = 'paused by operator';
