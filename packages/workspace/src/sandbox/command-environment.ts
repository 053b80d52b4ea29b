/** The environment every command gets: nothing of the worker's, plus `extra`. */
export function commandEnvironment(
  workspace: string,
  pathValue: string,
  tmp: string,
  extra: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  return {
    PATH: pathValue,
    HOME: workspace,
    TMPDIR: tmp,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    CI: '1',
    GIT_TERMINAL_PROMPT: '0',
    ...extra,
  };
}
