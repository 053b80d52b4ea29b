import type { Command } from 'commander';
import { projectChecksReport, type ProjectChecksReport } from '@baton/projects';
import type { ProjectRecord } from '@baton/projects';
import { readFeatures } from '@baton/session';
import { parseProjectId } from '../internal/argument-parsers.js';
import { withProjects, type ProjectAccess } from '../internal/project-access.js';
import { formatTable } from '../internal/table.js';
import { outputJson, terminalSafe } from '../internal/terminal-text.js';
import { describeVerification } from '../internal/verification.js';

interface ChecksOptions {
  json?: boolean;
  local?: boolean;
}

/** What `baton checks` reads: the project and its report (the dashboard's `/checks` too). */
interface ProjectChecks {
  project: ProjectRecord;
  report: ProjectChecksReport;
}

/** The project, its checklist and its check record, the same for Redis and `BATON_HOME`. */
async function readProjectChecks(projects: ProjectAccess, id: string): Promise<ProjectChecks> {
  const project = await projects.requireProject(id);
  const store = await projects.memoryStore(id);
  try {
    const features = await readFeatures(store);
    const checks = await projects.readChecks(id);
    return { project, report: projectChecksReport(project, features, checks) };
  } finally {
    await store.close();
  }
}

/** The last non-empty line of a check's output, cut to `max` characters. */
function excerpt(text: string, max = 60): string {
  const line = text
    .split('\n')
    .map((item) => item.trim())
    .filter((item) => item !== '')
    .at(-1);
  if (line === undefined) return '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function render({ project, report }: ProjectChecks): string {
  const rows = report.features;
  const c = project.counters;
  const head = [
    `project   ${project.id}: ${c.featuresPassing}/${c.featuresTotal} passing (${c.featuresVerified} verified, ${c.featuresClaimed} claimed, ${c.featuresRegressed} regressed)`,
    `checks    ${describeVerification(project.verification)}`,
  ];
  if (rows.length === 0) return `${head.join('\n')}\nno feature checklist yet\n`;
  const table = formatTable(
    ['FEATURE', 'STATE', 'LAST RUN', 'WHEN', 'COMMIT', 'CHECK', 'OUTPUT'],
    rows.map((row) => {
      const evidence = row.evidence;
      return [
        row.id,
        row.state,
        evidence === null
          ? '-'
          : evidence.stopped === 'timeout'
            ? 'timed out'
            : evidence.stopped === 'not_started'
              ? 'not started'
              : `${evidence.passed ? 'passed' : 'failed'} (exit ${evidence.exitCode ?? '-'}, ${(evidence.durationMs / 1000).toFixed(1)} s)`,
        evidence === null ? '-' : new Date(evidence.at).toISOString(),
        evidence?.commit?.slice(0, 12) ?? '-',
        row.check ?? '(none)',
        evidence === null ? '' : excerpt(evidence.outputTail),
      ];
    }),
  );
  return `${head.join('\n')}\n${table}\n`;
}

/** `baton checks ID [--json] [--local]`: each feature's check and the evidence of its last run. */
export function registerChecksCommand(program: Command): void {
  program
    .command('checks')
    .description(
      "Show each feature's check and its last result: state (verified, claimed, regressed, refused, unverified, failing), when, on which commit, and the last line of its output.",
    )
    .argument('<id>', 'project id', parseProjectId)
    .option('--local', 'a `baton run` project under BATON_HOME instead of one on Redis')
    .option(
      '--json',
      'print JSON: the counts, the settings and every feature with its whole evidence (output tail included)',
    )
    .addHelpText(
      'after',
      '\nStates: verified (its last check passed), claimed (accepted with no check to run),\n' +
        'regressed (a later re-run failed; set back to failing), refused (a flip whose check\n' +
        'failed), unverified (passing, not checked yet), failing. Reads REDIS_CLUSTER_NODES or\n' +
        'REDIS_URL and BATON_PREFIX unless --local.',
    )
    .action(async (id: string, options: ChecksOptions) => {
      const checks = await withProjects(options, (projects) => readProjectChecks(projects, id));
      if (options.json === true) {
        process.stdout.write(`${outputJson(checks.report, 2)}\n`);
        return;
      }
      process.stdout.write(render(terminalSafe(checks)));
    });
}
