// Public surface of @baton/workspace.
export { WorkspaceError } from './errors.js';
export type { WorkspaceErrorCode } from './errors.js';
export {
  checkBranchName,
  checkWorkspaceDir,
  isRemoteUrl,
  listProjectBranches,
  normalizeRepo,
  projectBranch,
  resolveProjectSource,
} from './repository/source.js';
export type {
  CheckWorkspaceDirOptions,
  ProjectBranch,
  ProjectSource,
  ResolveProjectSourceOptions,
} from './repository/source.js';
export { isForeignNonEmptyDirectory, previewAdoption } from './repository/adoption.js';
export type { AdoptionPreview, PreviewAdoptionOptions } from './repository/adoption.js';
export { DEFAULT_MAX_FILE_BYTES } from './repository/file-limits.js';
export type { SpecialFileKind } from './repository/worktree-files.js';
export { createProjectWorkspace } from './repository/project-workspace.js';
export type {
  Checkpoint,
  CheckpointHooks,
  CheckpointRequest,
  PreparedWorkspace,
  ProjectWorkspace,
  ProjectWorkspaceOptions,
  PushRetryOptions,
} from './repository/project-workspace.js';
export type { ReplacedStaleTip } from './repository/stale-tip.js';
export {
  MEMORY_SNAPSHOT_FORMAT,
  memorySnapshotRef,
  safeMemoryPath,
  screenMemoryFiles,
} from './repository/memory-snapshot-format.js';
export type {
  MemoryFile,
  MemorySnapshotManifest,
  WithheldMemoryFile,
  WithheldReason,
} from './repository/memory-snapshot-format.js';
export { MemorySnapshotWriter, collectMemoryFiles } from './repository/memory-snapshot.js';
export type {
  MemorySnapshotInput,
  MemorySnapshotResult,
  MemorySnapshotWriterOptions,
} from './repository/memory-snapshot.js';
export { readMemorySnapshot, restoreMemoryFiles } from './repository/memory-snapshot-read.js';
export type { MemorySnapshot, MemorySnapshotRead } from './repository/memory-snapshot-read.js';
export { openProjectWorkspace } from './repository/open-project-workspace.js';
export type { OpenProjectWorkspaceOptions } from './repository/open-project-workspace.js';
export { workspaceGitPaths } from './repository/layout.js';
export type { WorkspaceGitPaths } from './repository/layout.js';
export { diffProjectBranch } from './repository/diff.js';
export type { DiffProjectBranchOptions, ProjectBranchDiff } from './repository/diff.js';
export {
  SECRET_FILE_PATTERNS,
  ensureSecretExcludes,
  looksLikeSecretFile,
} from './repository/secret-files.js';
export {
  BATON_FENCE_TRAILER,
  BATON_HOOKS_TRAILER,
  BATON_PROJECT_TRAILER,
  formatCommitMessage,
  readTrailer,
} from './repository/trailers.js';
export {
  DEFAULT_SANDBOX_POLICY,
  parseProjectSandbox,
  parseSandboxPolicy,
  parseSandboxSetting,
  projectSandboxSchema,
  resolveSandboxPolicy,
  sandboxPolicySchema,
} from './sandbox/policy.js';
export type {
  ProjectSandbox,
  SandboxPolicy,
  SandboxPolicyInput,
  SandboxSetting,
} from './sandbox/policy.js';
export {
  DEFAULT_SANDBOX_SETUP,
  describeSandbox,
  summarizeSandbox,
  unsandboxedNotice,
} from './sandbox/command-sandbox.js';
export { openCommandSandbox } from './sandbox/open-sandbox.js';
export type {
  CommandResult,
  CommandSandbox,
  OpenCommandSandboxOptions,
  RunCommandOptions,
  SandboxDescription,
  SandboxProcess,
  SandboxSetup,
  StartProcessOptions,
} from './sandbox/command-sandbox.js';
export { probeSandbox, sandboxUnavailableMessage } from './sandbox/probe.js';
export { READ_ONLY_GIT_NOTE, readOnlyGitNote } from './sandbox/sandbox-git.js';
export { SANDBOX_GIT_DIR, SANDBOX_PATH } from './sandbox/bubblewrap.js';
export type { SandboxProbe } from './sandbox/probe.js';
export type { LimitsEnforcement } from './sandbox/limits.js';
export { hostAllowed, startFilteringProxy } from './sandbox/network-proxy.js';
export type {
  FilteringProxy,
  FilteringProxyOptions,
  ProxyDecision,
} from './sandbox/network-proxy.js';
export { decideSandbox, describeSandboxDecision, sessionSandboxSetup } from './sandbox/decide.js';
export type { DecideSandboxOptions, SandboxDecision } from './sandbox/decide.js';
