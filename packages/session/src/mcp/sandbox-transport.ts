import type { SandboxProcess } from '@baton/workspace';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Largest message a server may send (a screenshot is a few MiB of base64). */
const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;
/** Most of a server's stderr kept to explain a failure. */
const STDERR_TAIL = 4_096;

/**
 * The MCP stdio transport over a process Baton started in the sandbox (the SDK's own stdio
 * transport spawns on the host). A line that is not a JSON-RPC message is counted and skipped,
 * as the SDK's transport does; a line over 32 MiB closes the connection.
 */
export class SandboxStdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;

  readonly #process: SandboxProcess;
  readonly #buffer = new ReadBuffer({ maxBufferSize: MAX_MESSAGE_BYTES });
  #stderr = '';
  #closed = false;
  /** Lines on stdout that were not protocol messages. */
  garbageLines = 0;

  constructor(child: SandboxProcess) {
    this.#process = child;
  }

  /** The end of what the server printed on stderr (its own explanation of a failure). */
  get stderrTail(): string {
    return this.#stderr;
  }

  async start(): Promise<void> {
    const child = this.#process;
    child.stdout.on('data', (chunk: Buffer) => {
      try {
        this.#buffer.append(chunk);
      } catch (error) {
        this.onerror?.(error as Error);
        void this.close();
        return;
      }
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.#buffer.readMessage();
        } catch {
          this.garbageLines += 1;
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    child.stdin.on('error', (error) => this.onerror?.(error));
    void child.exited.then(() => this.#markClosed());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) throw new Error('the server has exited');
    const stdin = this.#process.stdin;
    await new Promise<void>((resolve, reject) => {
      stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  async close(): Promise<void> {
    await this.#process.stop();
    this.#markClosed();
  }

  #markClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#buffer.clear();
    this.onclose?.();
  }
}
