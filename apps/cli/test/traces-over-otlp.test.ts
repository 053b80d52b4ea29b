import { startWebhookReceiver, waitFor, type WebhookReceiver } from '@baton/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './helpers.js';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

let receiver: WebhookReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

/** A local OTLP/HTTP receiver: answers 200 to every POST and keeps the bodies. */
async function otlpReceiver(): Promise<{ endpoint: string; receiver: WebhookReceiver }> {
  receiver = await startWebhookReceiver({ status: 200 });
  return { endpoint: new URL(receiver.url).origin, receiver };
}

interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}

/** Every span of every OTLP/JSON export request, with its service.name. */
function exportedSpans(target: WebhookReceiver): Array<OtlpSpan & { service: string }> {
  return target.requests.flatMap((request) => {
    expect(request.path).toBe('/v1/traces');
    expect(request.headers['content-type']).toMatch(/application\/json/);
    const body = JSON.parse(request.rawBody) as {
      resourceSpans: Array<{
        resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
        scopeSpans: Array<{ spans: OtlpSpan[] }>;
      }>;
    };
    return body.resourceSpans.flatMap((resource) => {
      const service =
        resource.resource.attributes.find((attribute) => attribute.key === 'service.name')?.value
          .stringValue ?? '';
      return resource.scopeSpans.flatMap((scope) =>
        scope.spans.map((span) => ({ ...span, service })),
      );
    });
  });
}

const attribute = (span: OtlpSpan, key: string) =>
  span.attributes.find((entry) => entry.key === key)?.value;

describe('traces over OTLP from the entry points', () => {
  it('baton run with OTEL_EXPORTER_OTLP_ENDPOINT sends the session, request and tool spans', async () => {
    const { endpoint, receiver: target } = await otlpReceiver();
    const result = await runCli(['run', '--goal', 'Greet\n- hello', '--project', 'otel'], {
      cwd: world.dir,
      env: cliEnv(world.home, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }),
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Traces: OTLP to ${endpoint}/v1/traces.`);
    // `baton run` flushes its spans before it exits: they are all there when it has.
    const spans = exportedSpans(target);
    const names = new Set(spans.map((span) => span.name));
    expect(names).toContain('invoke_agent baton');
    expect(names).toContain('chat sim');
    expect(names).toContain('execute_tool bash');
    expect(new Set(spans.map((span) => span.service))).toEqual(new Set(['baton']));
    const sessions = spans.filter((span) => span.name === 'invoke_agent baton');
    const requests = spans.filter((span) => span.name === 'chat sim');
    expect(sessions.length).toBeGreaterThanOrEqual(2);
    for (const request of requests) {
      expect(sessions.map((session) => session.spanId)).toContain(request.parentSpanId);
      expect(attribute(request, 'gen_ai.request.model')).toEqual({ stringValue: 'sim' });
      expect(attribute(request, 'gen_ai.usage.output_tokens')).toHaveProperty('intValue');
    }
  });

  it('baton worker with OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_SERVICE_NAME sends its sessions spans', async () => {
    const { endpoint, receiver: target } = await otlpReceiver();
    const worker = world.start(['worker', '--port', '0'], {
      BATON_MODEL: 'sim',
      BATON_CHAIN_DELAY_MS: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_SERVICE_NAME: 'baton-worker-under-test',
    });
    await worker.waitForOutput('"worker started"');
    const id = world.redis.projectId('otelw');
    const enqueued = await world.cli(['enqueue', '--project', id, '--goal', 'Greet\n- hello']);
    expect(enqueued.code).toBe(0);
    await waitFor(
      'the project to complete',
      async () => (await world.redis.control.getProject(id))?.status === 'completed',
      60_000,
    );
    // SIGTERM flushes what the batch processor holds before the worker exits.
    worker.kill('SIGTERM');
    expect((await worker.done).code).toBe(0);
    const spans = exportedSpans(target);
    const names = new Set(spans.map((span) => span.name));
    expect(names).toContain('invoke_agent baton');
    expect(names).toContain('chat sim');
    expect([...names].some((name) => name.startsWith('execute_tool '))).toBe(true);
    expect(new Set(spans.map((span) => span.service))).toEqual(
      new Set(['baton-worker-under-test']),
    );
    const sessions = spans.filter((span) => span.name === 'invoke_agent baton');
    expect(sessions.every((span) => attribute(span, 'baton.project.id')?.stringValue === id)).toBe(
      true,
    );
  });

  it('refuses an OTEL_EXPORTER_OTLP_ENDPOINT that is not a URL in one line (exit 2)', async () => {
    const run = await runCli(['run', '--goal', 'Greet\n- hello', '--project', 'bad'], {
      cwd: world.dir,
      env: cliEnv(world.home, { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }),
    });
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toContain(
      'OTEL_EXPORTER_OTLP_ENDPOINT is not an http:// or https:// URL',
    );
    const worker = await world.cli(['worker', '--port', '0'], {
      BATON_MODEL: 'sim',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
    });
    expect(worker.code).toBe(2);
    expect(oneLine(worker.stderr)).toContain(
      'OTEL_EXPORTER_OTLP_ENDPOINT is not an http:// or https:// URL',
    );
  });
});
