import { pino, type Logger } from 'pino';

/** JSON logs on stdout; every line from a session carries projectId, sessionId and jobId. */
export function createLogger(options: { level: string; workerId: string }): Logger {
  return pino({
    level: options.level,
    base: { workerId: options.workerId, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
