// Imported first by main.ts, so it is in place before any command (or commander's own help and
// error output) writes a byte.
//
// A reader that goes away (`baton logs <id> | head -1`) is not a failure of baton: exit quietly
// with status 0, as `git log | head` does. Node ignores SIGPIPE, so a write to a closed pipe
// surfaces as an `EPIPE` 'error' event on process.stdout or process.stderr; unhandled, it prints a
// stack trace and exits 1. Nothing more can be said to a reader that left, so the process ends at
// once (a `baton run` stops like a Ctrl-C'd one would after a crash: the next run resumes from
// memory and the last checkpoint).
function exitOnClosedPipe(error: NodeJS.ErrnoException): void {
  if (error.code === 'EPIPE') process.exit(0);
  // Any other stream error stays what it was: an uncaught error.
  throw error;
}

process.stdout.on('error', exitOnClosedPipe);
process.stderr.on('error', exitOnClosedPipe);
