import type { LimitsEnforcement } from './limits.js';
import type { SandboxPolicy } from './policy.js';

/** Commands in bubblewrap under `policy`: one shape for the setup and for what is shown. */
export interface BubblewrapDescription {
  mode: 'bubblewrap';
  policy: SandboxPolicy;
  /** How memory and process limits are enforced (from the probe); `rlimit`: no cgroup, per process only. */
  limits?: LimitsEnforcement | undefined;
}

/** What a session's commands run in, as shown in events, `baton status` and the dashboard. */
export type SandboxDescription =
  | BubblewrapDescription
  | {
      mode: 'off';
      /** `opted-out`: `BATON_SANDBOX=off` / `--no-sandbox`; `simulator`: the simulator's own commands on a host without a usable sandbox. */
      reason: 'opted-out' | 'simulator';
      /** One line for people: what this means and how to turn the sandbox on. */
      notice: string;
    };
