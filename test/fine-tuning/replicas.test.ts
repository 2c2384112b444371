/**
 * Two gateway processes (replicas) on one Postgres database and one file store, each with its own
 * job monitor: the row leases make every hosted job submitted exactly once, and jobs of a replica
 * that stops — or crashes, leaving its leases behind — are finished by the other.
 */
import { randomBytes } from 'node:crypto';
import { toFile } from 'openai';
import { api } from '../support/gateway';
import { itOnPostgres } from '../support/gateway-process';
import { createIntegration, dataset, eventually, hostedGround, sdk, startHostedGateway, type HostedGateway } from './harness';

const JOBS = 50;
const SECRET = `sk-fake-${randomBytes(12).toString('hex')}`;

itOnPostgres('two replicas on one Postgres: 50 hosted jobs are each submitted once, and a stopped or crashed replica leaves none stuck', async () => {
  const ground = await hostedGround('gw-ft-replicas-', SECRET);
  const { fake, dataDir, database, key } = ground;
  // Short leases: a replica that vanishes gives its jobs up within half a second.
  const env = { GATEWAY_JOB_LEASE_MS: '500' };
  let a: HostedGateway | undefined;
  let b: HostedGateway | undefined;
  let watching = true;
  try {
    a = await startHostedGateway({ fake, database, dataDir, key, env });
    b = await startHostedGateway({ fake, database, dataDir, key, env });
    const prisma = b.gateway.services.db.prisma;
    const logsOfA = a.logs;

    await createIntegration(a, 'shared-openai', SECRET);
    const file = await sdk(b).files.create({ file: await toFile(Buffer.from(dataset()), 'train.jsonl'), purpose: 'fine-tune' });

    // Which monitors hold leases while the jobs run.
    const owners = new Set<string>();
    const watcher = (async () => {
      while (watching) {
        const rows = await prisma.$queryRaw<{ lease_owner: string }[]>`SELECT DISTINCT lease_owner FROM fine_tuning_jobs WHERE lease_owner IS NOT NULL`;
        for (const row of rows) owners.add(row.lease_owner);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();

    const ids: string[] = [];
    for (let batch = 0; batch < JOBS; batch += 10) {
      const created = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          api(i % 2 ? a! : b!, 'POST', '/v1/fine_tuning/jobs', {
            body: { model: 'gpt-4o-mini', training_file: file.id, suffix: `replica-${batch + i}`, gateway_options: { 'x-gateway-provider': '@shared-openai' } },
          }),
        ),
      );
      for (const res of created) {
        expect(res.status).toBe(200);
        ids.push(res.body.id);
      }
    }

    // Mid-run: a third replica "crashes" holding leases on three jobs nobody holds now …
    await eventually(async () => (fake.state.createJobCalls >= 10 ? true : undefined), 30_000, 5);
    const crashed = await prisma.$queryRaw<{ id: string }[]>`
      UPDATE fine_tuning_jobs SET lease_owner = 'crashed-replica', lease_expires_at = now() + interval '500 milliseconds'
      WHERE lease_owner IS NULL AND status NOT IN ('succeeded', 'failed', 'cancelled')
        AND id IN (SELECT id FROM fine_tuning_jobs WHERE lease_owner IS NULL AND status NOT IN ('succeeded', 'failed', 'cancelled') LIMIT 3)
      RETURNING id`;
    // … and replica A is stopped while it has work in hand.
    await a.stop();
    a = undefined;

    const statuses = await eventually(
      async () => {
        const rows = await prisma.fineTuningJob.findMany({ where: { id: { in: ids } }, select: { id: true, status: true } });
        return rows.every((r) => r.status === 'succeeded') ? rows : undefined;
      },
      40_000,
      100,
    );
    watching = false;
    await watcher;

    expect(statuses).toHaveLength(JOBS);
    // Each job reached the provider exactly once.
    expect(fake.state.createJobCalls).toBe(JOBS);
    const submittedFor = [...fake.state.jobs.values()].map((j) => j.metadata?.gateway_job_id);
    expect(new Set(submittedFor).size).toBe(JOBS);
    expect([...submittedFor].sort()).toEqual([...ids].sort());
    const submittedEvents = await prisma.fineTuningJobEvent.groupBy({ by: ['jobId'], where: { message: { startsWith: 'Submitted to' } }, _count: true });
    expect(submittedEvents).toHaveLength(JOBS);
    expect(submittedEvents.every((e) => e._count === 1)).toBe(true);
    // Both replicas submitted jobs; the crashed replica's jobs were taken over once its leases expired.
    const submitted = (logs: string[]) => logs.filter((line) => line.includes('fine-tuning job submitted')).length;
    expect(submitted(logsOfA)).toBeGreaterThan(0);
    expect(submitted(b.logs)).toBeGreaterThan(0);
    expect(submitted(logsOfA) + submitted(b.logs)).toBe(JOBS);
    expect(owners.has(b.gateway.monitor.owner)).toBe(true);
    expect(crashed.length).toBeGreaterThan(0);
    expect(owners.has('crashed-replica')).toBe(true);
    expect(await prisma.fineTuningJob.count({ where: { leaseOwner: { not: null } } })).toBe(0);
    // The list through the surviving replica shows them all finished.
    const list = await api(b, 'GET', '/v1/fine_tuning/jobs?limit=100');
    expect(list.body.data.filter((j: any) => ids.includes(j.id) && j.status === 'succeeded')).toHaveLength(JOBS);
  } finally {
    watching = false;
    await a?.stop();
    await b?.stop();
    await ground.close();
  }
});
