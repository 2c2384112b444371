/**
 * Issue 23's acceptance on Postgres: a gateway-run batch of 1 000 lines, two gateway processes on one
 * database, the one running the batch SIGKILLed halfway. The other takes the batch over once its lease
 * runs out: every line is answered exactly once across the output and error files, and the provider
 * saw each `custom_id` at most once — a line in flight at the kill is failed (`request_interrupted`),
 * never sent again (test/batches/runner.test.ts shows the same takeover within one process).
 */
import { randomBytes } from 'node:crypto';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { MASTER_KEY, createIntegration, createTestDatabase, eventually, newKey, sdk, tempDir } from '../fine-tuning/harness';
import { adminQuery, type TestDatabase } from '../support/database';
import { describeOnPostgres, spawnReplica, type GatewayProcess } from '../support/gateway-process';
import { chatLine, createBatch, fileLines, finished, jsonl } from './harness';

const LINES = 1000;
const CONCURRENCY = 8;
const SECRET = `sk-fake-${randomBytes(12).toString('hex')}`;

describeOnPostgres('a batch of 1 000 lines with the replica running it SIGKILLed halfway', () => {
  let fake: FakeOpenAI;
  let database: TestDatabase;
  let data: { dir: string; remove(): Promise<void> };
  const replicas: GatewayProcess[] = [];
  const key = newKey();

  beforeAll(async () => {
    fake = await startFakeOpenAI({ apiKey: SECRET });
    database = await createTestDatabase();
    data = await tempDir('gw-batch-kill-');
    const shared = { databaseUrl: database.databaseUrl!, dataDir: data.dir, key, masterKey: MASTER_KEY, openaiUrl: fake.url };
    const env = {
      GATEWAY_BATCH_POLL_MS: '50',
      GATEWAY_BATCH_CONCURRENCY: String(CONCURRENCY),
      // Three seconds: a loaded machine's renewal can lag a second, and a lease lost before the kill fails the requests in flight then too.
      GATEWAY_JOB_LEASE_MS: '3000',
    };
    // One after the other: the first start bootstraps the organisation, the second finds it.
    replicas.push(await spawnReplica(shared, env));
    replicas.push(await spawnReplica(shared, env));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await database?.drop();
    await fake?.close();
    await data?.remove();
  });

  it('answers every line once, in the output or the error file, and calls the provider at most once per line', async () => {
    const [first] = replicas;
    const gateway = { url: first.url, key };
    await createIntegration(gateway, 'my-openai', SECRET);
    const tag = `kill-${randomBytes(4).toString('hex')}`;
    const ids = Array.from({ length: LINES }, (_, i) => `${tag}-${i + 1}`);
    // The question names the line, so the fake's requests say which custom_id each was for.
    const questionOf = (id: string) => `${id} question`;
    const client = sdk(gateway);
    // A provider answering in 20 ms: the batch takes a few seconds, long enough to be killed halfway.
    fake.delayNext('POST', '/v1/chat/completions', 20, LINES);
    const content = jsonl(ids.map((id) => chatLine(id, 'gpt-4o-mini', questionOf(id))));
    // The gateway's own runner (OpenAI's batch service would be the default): its lease is what is taken over.
    const created = await createBatch(client, content, { 'x-gateway-provider': '@my-openai', 'x-gateway-batch-runner': 'gateway' });

    const sentFor = () => {
      const counts = new Map<string, number>();
      for (const request of fake.state.chatRequests) {
        const question = String((request.body.messages as Array<{ content: unknown }>)[0]?.content);
        if (question.startsWith(tag)) counts.set(question, (counts.get(question) ?? 0) + 1);
      }
      return counts;
    };
    await eventually(async () => (sentFor().size >= LINES / 2 ? true : undefined), 60_000, 5);

    // Kill the process that holds the batch's lease (its owner names the process id).
    const [row] = await adminQuery(database.databaseUrl!, 'SELECT lease_owner FROM batches WHERE id = $1', [created.id]);
    const pid = Number(String(row?.lease_owner).split(':')[1]);
    const victim = replicas.find(({ child }) => child.pid === pid);
    expect(victim).toBeDefined();
    const exited = new Promise((resolve) => victim!.child.once('exit', resolve));
    victim!.child.kill('SIGKILL');
    await exited;
    const sentAtKill = sentFor().size;
    expect(sentAtKill).toBeLessThan(LINES);

    const survivor = replicas.find((r) => r !== victim)!;
    const survivorClient = sdk({ url: survivor.url, key });
    const batch = await finished(survivorClient, created.id, 90_000);
    expect(batch.status).toBe('completed');
    const counts = batch.request_counts!;
    expect(counts.total).toBe(LINES);
    expect(counts.completed + counts.failed).toBe(LINES);
    // At most the requests in flight at the kill were lost with it.
    expect(counts.failed).toBeLessThanOrEqual(CONCURRENCY);

    const output = await fileLines(survivorClient, batch.output_file_id!);
    const errors = counts.failed > 0 ? await fileLines(survivorClient, batch.error_file_id!) : [];
    expect(output).toHaveLength(counts.completed);
    expect(errors).toHaveLength(counts.failed);
    expect([...output, ...errors].map((line) => line.custom_id).sort()).toEqual([...ids].sort());
    for (const line of errors) expect(line).toMatchObject({ response: null, error: { code: 'request_interrupted' } });

    const sent = sentFor();
    expect(Math.max(...sent.values())).toBe(1);
    // Every answered line was answered by the provider; every line never sent was sent by the survivor.
    for (const line of output) expect(sent.get(questionOf(line.custom_id))).toBe(1);
    expect(sent.size).toBeGreaterThan(sentAtKill);
  }, 180_000);
});
