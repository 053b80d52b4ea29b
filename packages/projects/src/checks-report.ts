import {
  featureCheckRows,
  type Feature,
  type FeatureCheckRow,
  type FeatureChecks,
} from '@baton/session';
import type { ProjectRecord, ProjectVerification } from './project.js';

/**
 * What `baton checks --json` prints and the dashboard's `GET /api/projects/:id/checks` answers:
 * a project's verified-progress counts, its settings, and one row per feature of its checklist
 * with the evidence of that feature's last check run.
 */
export interface ProjectChecksReport {
  id: string;
  counts: {
    passing: number;
    total: number;
    verified: number;
    claimed: number;
    regressed: number;
  };
  /** The project's `verification` settings, `null` when it has none. */
  verification: ProjectVerification | null;
  features: FeatureCheckRow[];
}

/** The report of `project` from its checklist (`null` before init wrote one) and check record. */
export function projectChecksReport(
  project: ProjectRecord,
  features: readonly Feature[] | null,
  checks: FeatureChecks,
): ProjectChecksReport {
  const c = project.counters;
  return {
    id: project.id,
    counts: {
      passing: c.featuresPassing,
      total: c.featuresTotal,
      verified: c.featuresVerified,
      claimed: c.featuresClaimed,
      regressed: c.featuresRegressed,
    },
    verification: project.verification,
    features: featureCheckRows(features, checks, project.verification?.check),
  };
}
