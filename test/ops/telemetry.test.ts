/**
 * OpenTelemetry (issue 26 §4): with OTEL_EXPORTER_OTLP_ENDPOINT set, a gateway process exports its
 * traces over OTLP/HTTP to a receiver of this test: one chat call is a trace continuing the caller's
 * `traceparent`, with the server span → the provider call's client span (GenAI attributes) → the
 * HTTP request to the provider, which carries the trace on; a hosted job's monitor steps are spans of
 * their own traces linked to the job, parents of their provider calls; no secret, no prompt text and
 * no dataset line in any span.
 * The gateway runs in a process of its own: instrumentation patches modules as Node loads them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/db/migrations';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { toFile } from 'openai';
import { createIntegration, eventually } from '../fine-tuning/harness';
import { gatewaySdk } from '../support/answers';
import { compiled, nodeEvalArgs } from '../support/compiled';
import { createTestDatabase, type TestDatabase } from '../support/database';

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
  links?: { traceId: string; spanId: string }[];
}

const INTERNAL = 1;
const SERVER = 2;
const CLIENT = 3;
const PROVIDER_KEY = `sk-fake-${randomBytes(12).toString('hex')}`;
const GATEWAY_KEY = `gw_test_${randomBytes(16).toString('hex')}`;
const PROMPT = 'A prompt no span may hold';

let receiver: http.Server;
const bodies: string[] = [];
let fake: FakeOpenAI;
let database: TestDatabase;
let dataDir: string;
let child: ChildProcess;
let gatewayUrl: string;

/** An OTLP/HTTP trace receiver (JSON, as @opentelemetry/exporter-trace-otlp-http sends it). */
async function startReceiver(): Promise<string> {
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') bodies.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
}

const spans = (): ExportedSpan[] =>
  bodies.flatMap((b) =>
    (JSON.parse(b) as { resourceSpans: { scopeSpans: { spans: ExportedSpan[] }[] }[] }).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)),
  );

const attribute = (span: ExportedSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value && Object.values(value)[0];
};

/** Starts the gateway in a child process with `env`; resolves with its URL once it listens. */
function startGatewayProcess(env: Record<string, string>): Promise<string> {
  const script = `
    const { startGateway } = require(${JSON.stringify(compiled('src/main.ts'))});
    const { loadConfig } = require(${JSON.stringify(compiled('src/config.ts'))});
    const { createLogger } = require(${JSON.stringify(compiled('src/logger.ts'))});
    (async () => {
      const config = { ...loadConfig(), pgliteDir: ${JSON.stringify(database.pgliteDir)} };
      const gateway = await startGateway(config, createLogger('silent'), { pgliteLoadDataDir: process.env.TEMPLATE || undefined });
      process.stdout.write('\\nlistening: ' + gateway.url + '\\n');
      process.stdin.on('end', () => gateway.stop().then(() => process.exit(0)));
      process.stdin.resume();
    })().catch((err) => { console.error(err); process.exit(1); });`;
  const childEnv: Record<string, string> = { ...process.env, NODE_OPTIONS: '', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, ...env };
  delete childEnv.DATABASE_URL;
  if (database.databaseUrl) childEnv.DATABASE_URL = database.databaseUrl;
  child = spawn(process.execPath, nodeEvalArgs(script), { cwd: projectRoot(), env: childEnv, stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const url = /^listening: (\S+)$/m.exec(output)?.[1];
      if (url) resolve(url);
    });
    child.once('exit', (code) => reject(new Error(`gateway exited with ${code}`)));
  });
}

beforeAll(async () => {
  const endpoint = await startReceiver();
  fake = await startFakeOpenAI({ apiKey: PROVIDER_KEY });
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gw-otel-'));
  gatewayUrl = await startGatewayProcess({
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_SERVICE_NAME: 'gateway-under-test',
    GATEWAY_OPENAI_BASE_URL: fake.url,
    GATEWAY_BOOTSTRAP_API_KEY: GATEWAY_KEY,
    GATEWAY_JOB_POLL_MS: '100',
    TEMPLATE: database.pgliteLoadDataDir ?? '',
  });
}, 180_000); // a child gateway: slow on a loaded machine

afterAll(async () => {
  child?.stdin?.end();
  await new Promise((resolve) => (child?.exitCode === null ? child.once('exit', resolve) : resolve(null)));
  await fake?.close();
  receiver?.close();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

it('exports a chat call as one trace: server span → provider client span with GenAI attributes → HTTP to the provider', async () => {
  const traceId = randomBytes(16).toString('hex');
  const callerSpanId = randomBytes(8).toString('hex');
  const client = gatewaySdk(
    { url: gatewayUrl, key: GATEWAY_KEY },
    { apiKey: PROVIDER_KEY, headers: { 'x-gateway-provider': 'openai', traceparent: `00-${traceId}-${callerSpanId}-01` } },
  );
  const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }] });

  const genAi = await eventually(async () => spans().find((s) => s.traceId === traceId && attribute(s, 'gen_ai.operation.name') === 'chat'));
  const server = await eventually(async () => spans().find((s) => s.traceId === traceId && s.kind === SERVER));
  expect(server.parentSpanId).toBe(callerSpanId);
  expect(genAi.kind).toBe(CLIENT);
  expect(genAi.name).toBe('chat gpt-4o-mini');
  expect(Object.fromEntries(genAi.attributes.map((a) => [a.key, Object.values(a.value)[0]]))).toMatchObject({
    'gen_ai.system': 'openai',
    'gen_ai.request.model': 'gpt-4o-mini',
    'gen_ai.response.model': 'gpt-4o-mini',
    'gen_ai.usage.input_tokens': completion.usage?.prompt_tokens,
    'gen_ai.usage.output_tokens': completion.usage?.completion_tokens,
  });
  // The client span descends from the server span (through Express's spans).
  const byId = new Map(spans().map((s) => [s.spanId, s]));
  const ancestors: string[] = [];
  for (let at = byId.get(genAi.parentSpanId ?? ''); at; at = byId.get(at.parentSpanId ?? '')) ancestors.push(at.spanId);
  expect(ancestors).toContain(server.spanId);
  // The provider request is the client span's child and carried the trace to the provider.
  const outgoing = await eventually(async () => spans().find((s) => s.parentSpanId === genAi.spanId && s.kind === CLIENT));
  const sent = fake.state.chatRequests.at(-1)?.headers.traceparent;
  expect(sent).toBe(`00-${traceId}-${outgoing.spanId}-01`);

  const exported = bodies.join('\n');
  expect(exported).toContain('gateway-under-test');
  for (const secret of [PROVIDER_KEY, GATEWAY_KEY, PROMPT]) expect(exported).not.toContain(secret);
}, 60_000);

/** A dataset whose lines hold a marker no span may hold. */
const DATASET_MARKER = 'A dataset line no span may hold';
const trainingData = () =>
  Array.from({ length: 10 }, (_, i) =>
    JSON.stringify({
      messages: [
        { role: 'user', content: `${DATASET_MARKER} ${i}` },
        { role: 'assistant', content: `Answer ${i}` },
      ],
    }),
  ).join('\n') + '\n';

const attributesOf = (span: ExportedSpan) => Object.fromEntries(span.attributes.map((a) => [a.key, Object.values(a.value)[0]]));

it("exports each job-monitor step as a span linked to its job, parent of the step's provider calls", async () => {
  const gw = { url: gatewayUrl, key: GATEWAY_KEY };
  await createIntegration(gw, 'traced-openai', PROVIDER_KEY);
  const client = gatewaySdk(gw);
  const file = await client.files.create({ file: await toFile(Buffer.from(trainingData()), 'train.jsonl'), purpose: 'fine-tune' });
  const job = await client.fineTuning.jobs.create({
    model: 'gpt-4o-mini-2024-07-18',
    training_file: file.id,
    gateway_options: { 'x-gateway-provider': '@traced-openai' },
  } as never);
  await eventually(async () => ((await client.fineTuning.jobs.retrieve(job.id)).status === 'succeeded' ? true : undefined), 30_000);

  const steps = () => spans().filter((s) => attribute(s, 'gateway.fine_tuning.job.id') === job.id);
  const submit = await eventually(async () => steps().find((s) => s.name === 'fine_tuning.job submit'));
  const polls = await eventually(async () => {
    const found = steps().filter((s) => s.name === 'fine_tuning.job poll');
    return found.length >= 2 ? found : undefined;
  });
  const jobTrace = job.id.replace(/-/g, '');
  for (const step of [submit, ...polls]) {
    // Its own trace (no request's), linked to the job's.
    expect(step.kind).toBe(INTERNAL);
    expect(step.parentSpanId ?? '').toBe('');
    expect(step.links?.map((l) => l.traceId)).toEqual([jobTrace]);
    expect(attributesOf(step)).toMatchObject({ 'gen_ai.system': 'openai', 'gateway.fine_tuning.failed_attempts': 0 });
  }
  expect(new Set([submit, ...polls].map((s) => s.traceId)).size).toBe(polls.length + 1);
  expect(attributesOf(submit)['gateway.fine_tuning.job.status']).toBe('validating_files');

  // The submit step's provider calls are its children, as are their HTTP requests to the provider.
  const calls = await eventually(async () => {
    const children = spans().filter((s) => s.parentSpanId === submit.spanId && s.kind === CLIENT && attribute(s, 'gen_ai.operation.name'));
    return children.some((c) => attribute(c, 'gen_ai.operation.name') === 'createJob') ? children : undefined;
  });
  expect(calls.map((c) => attribute(c, 'gen_ai.operation.name'))).toEqual(expect.arrayContaining(['uploadFile', 'createJob']));
  const createJob = calls.find((c) => attribute(c, 'gen_ai.operation.name') === 'createJob')!;
  await eventually(async () => spans().find((s) => s.parentSpanId === createJob.spanId && s.kind === CLIENT));
  const pollCall = await eventually(async () => spans().find((s) => s.parentSpanId === polls[0].spanId && s.kind === CLIENT));
  expect(pollCall.traceId).toBe(polls[0].traceId);

  const exported = bodies.join('\n');
  for (const secret of [PROVIDER_KEY, GATEWAY_KEY, DATASET_MARKER]) expect(exported).not.toContain(secret);
}, 60_000);
