import type { LimitsEnforcement } from './limits.js';
import type { SandboxPolicy } from './policy.js';

/** What a session's commands run in, as shown in events, `baton status` and the dashboard. */
export type SandboxDescription =
  | {
      mode: 'bubblewrap';
      policy: SandboxPolicy;
      /** How memory and process limits are enforced; `rlimit`: no cgroup, per process only. */
      limits?: LimitsEnforcement | undefined;
    }
  | {
      mode: 'off';
      /** `opted-out`: `BATON_SANDBOX=off` / `--no-sandbox`; `simulator`: the simulator's own commands on a host without a usable sandbox. */
      reason: 'opted-out' | 'simulator';
      /** One line for people: what this means and how to turn the sandbox on. */
      notice: string;
    };
