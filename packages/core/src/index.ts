export { StoreError, isStoreError } from './store.js';
export type {
  EditResult,
  EntryKind,
  EntryStat,
  ListOptions,
  ListedEntry,
  MemoryStore,
  MutationContext,
  StoreErrorCode,
  StoreErrorOptions,
  StoreLimits,
  StoreUsage,
  WriteOptions,
} from './store.js';

// stores
export { InMemoryStore, createInMemoryStore } from './stores/in-memory-store.js';
export type { InMemoryStoreOptions } from './stores/in-memory-store.js';
export {
  FILE_SYSTEM_STORE_RESERVED_NAME,
  FileSystemStore,
  createFileSystemStore,
} from './stores/file-system-store.js';
export type { FileSystemStoreOptions } from './stores/file-system-store.js';
export { copyMemoryStore, exportMemoryToFolder, importMemoryFromFolder } from './copy-memory.js';
export type { CopyMemoryOptions, CopyMemoryResult } from './copy-memory.js';

// the memory tool
export {
  DEFAULT_MEMORY_TOOL_LIMITS,
  MEMORY_COMMAND_NAMES,
  MEMORY_ROOT,
  MemoryToolError,
  createMemoryTool,
  isMemoryToolError,
  memoryStoreLimits,
  parseCommand,
  parseMemoryPath,
  toVirtualPath,
} from './memory-tool.js';
export type {
  MemoryChange,
  MemoryCommandInput,
  MemoryCommandName,
  MemoryQuotaEnforcement,
  MemoryTool,
  MemoryToolErrorCode,
  MemoryToolErrorInfo,
  MemoryToolErrorOptions,
  MemoryToolHooks,
  MemoryToolLimits,
  MemoryToolOptions,
  MemoryToolResult,
  MemoryWrite,
  PathPolicyOptions,
} from './memory-tool.js';

// secret patterns shared by memory redaction and the workspace's commit filter
export {
  MAX_REDACTED_TEXT_BYTES,
  SECRET_PATTERNS,
  containsSecret,
  redactSecrets,
  redactThenCut,
  redactValue,
  serializeError,
} from './redaction.js';
export type { RedactionResult, SecretPattern } from './redaction.js';
export { EXIT_CODES } from './exit-codes.js';
export type { ExitCodeName } from './exit-codes.js';
