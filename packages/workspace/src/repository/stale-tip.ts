import type { CloneGit } from './clone-git.js';
import { BATON_FENCE_TRAILER, BATON_PROJECT_TRAILER, readFence, readTrailer } from './trailers.js';

/** Who pushes: the project and the fencing token of the lease the session holds. */
export interface PushFence {
  projectId: string;
  /** The session's fencing token (`ProjectLease.fence`); later leases have higher ones. */
  fence: number;
}

/**
 * A late push of a replaced session (an older fence) that a session's push took the branch back
 * from: the stale tip is kept on `keptOn`, nothing of it is lost.
 */
export interface ReplacedStaleTip {
  /** The stale commit the branch pointed at, now at `keptOn`. */
  tip: string;
  /** The highest fencing token among the stale commits: the replaced session's. */
  fence: number;
  /** How many commits the branch held that the session's commits do not contain. */
  commits: number;
  /** The branch holding `tip` now: `baton-kept/<project-id>/<fence>-<tip, 12 digits>`. */
  keptOn: string;
}

/** What the remote's branch holds beyond a session's own history. */
export type RemoteTipVerdict =
  /** Only checkpoints of this project written under older fences: a replaced session's. */
  | { kind: 'stale'; tip: string; fence: number; commits: number }
  /** Anything else (a person's commit, a newer session's): never overwritten. */
  | { kind: 'foreign'; newer: boolean; why: string };

/** Commits read at most; more than this beyond the session's own history is never "stale". */
const MAX_STALE_COMMITS = 1_000;

/**
 * The side branch a tip Baton took off `baton/<project-id>` is kept on. Outside `baton/`, so
 * `baton adopt --list` never takes it for a project; the tip's fence and id make it unique, so
 * keeping the same tip twice is a no-op and two tips never share a branch.
 */
export function keptBranch(projectId: string, fence: number, tip: string): string {
  return `baton-kept/${projectId}/${fence}-${tip.slice(0, 12)}`;
}

/**
 * Judges `tip`, the remote branch's commit after a push was rejected: `stale` when every commit
 * it has beyond `head` (the session's work) is a checkpoint of this project written under a fence
 * older than the session's, and it still contains `base` (the remote tip the session last knew);
 * else `foreign`, with the first commit that says why (newest first).
 */
export async function judgeRemoteTip(
  git: CloneGit,
  push: PushFence,
  where: { base: string | null; head: string; tip: string },
): Promise<RemoteTipVerdict> {
  const { base, head, tip } = where;
  const listed = await git.run([
    'log',
    '-z',
    `--max-count=${MAX_STALE_COMMITS + 1}`,
    '--format=%H%x1f%B',
    tip,
    `^${head}`,
    '--',
  ]);
  if (listed.code !== 0) {
    return { kind: 'foreign', newer: false, why: `git log failed: ${git.message(listed)}` };
  }
  const commits = listed.stdout
    .split('\0')
    .filter((record) => record.trim() !== '')
    .map((record) => {
      const split = record.indexOf('\x1f');
      const message = record.slice(split + 1);
      return {
        named: `commit ${record.slice(0, 12)} ("${subjectOf(message)}")`,
        ours: readTrailer(message, BATON_PROJECT_TRAILER) === push.projectId,
        fence: readFence(message),
      };
    });
  // A newer session's commit first: then this session is the stale one, whatever else is there.
  const newer = commits.find(
    (commit) => commit.ours && commit.fence !== null && commit.fence >= push.fence,
  );
  if (newer !== undefined) {
    return {
      kind: 'foreign',
      newer: true,
      why: `${newer.named} was written under fence ${newer.fence}, not older than this session's ${push.fence}: a newer session holds the project`,
    };
  }
  if (base !== null && !(await git.isAncestor(base, tip))) {
    return {
      kind: 'foreign',
      newer: false,
      why: `${git.branch} no longer contains ${base.slice(0, 12)}, the commit this session started from (it was rewritten outside Baton)`,
    };
  }
  if (commits.length > MAX_STALE_COMMITS) {
    return {
      kind: 'foreign',
      newer: false,
      why: `${git.branch} holds more than ${MAX_STALE_COMMITS} commits this session does not have`,
    };
  }
  let highest = -1;
  for (const commit of commits) {
    if (!commit.ours) {
      return {
        kind: 'foreign',
        newer: false,
        why: `${commit.named} is not a Baton checkpoint of this project`,
      };
    }
    if (commit.fence === null) {
      return {
        kind: 'foreign',
        newer: false,
        why: `${commit.named} carries no ${BATON_FENCE_TRAILER} trailer, so nothing proves it came from a replaced session`,
      };
    }
    highest = Math.max(highest, commit.fence);
  }
  return { kind: 'stale', tip, fence: highest, commits: commits.length };
}

/** A commit's first line, without control characters, at most 80 characters. */
function subjectOf(message: string): string {
  const first = message.split('\n').find((line) => line.trim() !== '') ?? '';
  // eslint-disable-next-line no-control-regex -- a commit message reaches terminals and logs
  const clean = first.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return clean.length > 80 ? `${clean.slice(0, 80)}...` : clean;
}
