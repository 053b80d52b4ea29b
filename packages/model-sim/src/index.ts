export { startModelSim } from './server.js';
export { runModelSimFromCli } from './cli.js';
export type { ModelSimCliOptions } from './cli.js';
export { ModelSimError } from './errors.js';
export type { ModelSimErrorCode } from './errors.js';
export { parseFaults } from './internal/faults.js';
export type {
  ModelSim,
  ModelSimOptions,
  SimContentBlock,
  SimFaults,
  WorkFault,
  SimRequestRecord,
  SimScript,
  SimScriptRequest,
  SimScriptResult,
  SimStats,
} from './types.js';
export { scriptedCommands } from './scripted-commands.js';
export type { ScriptedCommandsOptions } from './scripted-commands.js';
