import path from 'node:path';

/** Where a worker keeps one project's git state under its `BATON_HOME`. */
export interface WorkspaceGitPaths {
  /** Baton's git directory of the project's working tree. */
  gitDir: string;
  /** The project's remote when it names no `--repo`: a bare repository Baton owns. */
  localRemote: string;
  /** A bare repository `baton diff` and the dashboard fetch the branch into. */
  diffCache: string;
}

export function workspaceGitPaths(home: string, projectId: string): WorkspaceGitPaths {
  return {
    gitDir: path.join(home, 'git', `${projectId}.git`),
    localRemote: path.join(home, 'remotes', `${projectId}.git`),
    diffCache: path.join(home, 'cache', `${projectId}.git`),
  };
}
