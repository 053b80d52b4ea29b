// `@baton/workspace/policy`: what a project may ask of the sandbox and how a session's sandbox is
// described, without the sandbox itself (no child processes, git or proxy), for the project
// vocabulary in `@baton/projects/schema` and anything else that only validates or names things.
export {
  DEFAULT_SANDBOX_POLICY,
  parseProjectSandbox,
  projectSandboxSchema,
  sandboxPolicySchema,
} from './sandbox/policy.js';
export type { ProjectSandbox, SandboxPolicy, SandboxPolicyInput } from './sandbox/policy.js';
export type { SandboxDescription } from './sandbox/description.js';
export type { LimitsEnforcement } from './sandbox/limits.js';
