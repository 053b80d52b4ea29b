// The newest @anthropic-ai/sdk (as a new project installs it) against our simulator: its
// streaming helper and its error parsing, request by request. The test that installs the consumer
// copies this next to it, starts the simulator with one fault per request number in the order
// below, and compares what this prints (one JSON line per step) with what the SDK must see.
import Anthropic from '@anthropic-ai/sdk';

const simUrl = process.env.SIM_URL;
if (simUrl === undefined || simUrl === '') throw new Error('SIM_URL is not set');

const client = new Anthropic({ apiKey: 'consumer', baseURL: simUrl, maxRetries: 0 });
const tools = [
  {
    name: 'note',
    description: 'Write a note.',
    input_schema: { type: 'object', properties: { text: { type: 'string' } } },
  },
];
const params = (text, extra = {}) => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 256,
  tools,
  messages: [{ role: 'user', content: text }],
  ...extra,
});

function print(step, value) {
  process.stdout.write(`${JSON.stringify({ step, ...value })}\n`);
}

/** What the SDK made of an error: its class, status, the body's type, request id, retry-after, cause. */
function describeError(error) {
  return {
    name: error?.constructor?.name ?? typeof error,
    isAPIError: error instanceof Anthropic.APIError,
    status: error?.status ?? null,
    type: error?.error?.error?.type ?? error?.error?.type ?? null,
    requestId: typeof error?.requestID === 'string' ? error.requestID.slice(0, 8) : null,
    retryAfter: error?.headers?.get?.('retry-after') ?? null,
    shouldRetry: error?.headers?.get?.('x-should-retry') ?? null,
    cause: error?.cause instanceof Error ? error.cause.message : null,
  };
}

/** Streams `request`: the event types in order, and the final message (or the error). */
async function stream(step, request, options) {
  const events = [];
  try {
    const running = client.messages.stream(request, options);
    running.on('streamEvent', (event) => events.push(event.type));
    const message = await running.finalMessage();
    print(step, {
      events,
      stopReason: message.stop_reason,
      content: message.content.map((block) =>
        block.type === 'tool_use'
          ? { type: block.type, name: block.name, input: block.input }
          : { type: block.type, text: block.text },
      ),
      usage: { input: message.usage.input_tokens > 0, output: message.usage.output_tokens },
    });
  } catch (error) {
    print(step, { events, error: describeError(error) });
  }
}

async function create(step, request, options) {
  const started = Date.now();
  try {
    const message = await client.messages.create(request, options);
    print(step, { stopReason: message.stop_reason, ms: Date.now() - started });
  } catch (error) {
    print(step, { error: describeError(error) });
  }
}

// 1-4: streams (a text reply, a tool call, an error event after the 200, max_tokens in a tool call).
await stream('text', params('text'));
await stream('tool', params('tool'));
await stream('stream-error', params('text'));
await stream('max-tokens-in-tool-use', params('tool'));
// 5-10: errors as HTTP statuses.
await create('401', params('text'));
await create('403', params('text'));
await create('404', params('text', { model: 'claude-nope-9' }));
await create('429', params('text'));
await create('529', params('text'));
await create('500', params('text'));
// 11-12: the SDK's own retry of a 429, after the retry-after the simulator sent.
await create('429-retried', params('text'), { maxRetries: 1 });
// 13-14: a stream cut mid-response, an empty reply.
await stream('cut-stream', params('text'));
await stream('empty-reply', params('text'));
