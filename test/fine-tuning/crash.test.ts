/**
 * A gateway process killed with SIGKILL in the middle of hosted jobs: its leases expire and another
 * process finishes every job, submitting none of them twice.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { itOnPostgres, spawnReplica } from '../support/gateway-process';
import { MASTER_KEY, createIntegration, eventually, hostedGround, startHostedGateway, startHostedJobs, type HostedGateway } from './harness';

const JOBS = 20;
const SECRET = `sk-fake-${randomBytes(12).toString('hex')}`;
const LEASE_MS = '1000';

itOnPostgres('a gateway process killed mid-run (SIGKILL) leaves no job stuck and none submitted twice', async () => {
  const ground = await hostedGround('gw-ft-crash-', SECRET);
  const { fake, dataDir, database, key } = ground;
  let victim: ChildProcess | undefined;
  let survivor: HostedGateway | undefined;
  try {
    const shared = { databaseUrl: database.databaseUrl!, dataDir, key, masterKey: MASTER_KEY, openaiUrl: fake.url };
    const spawned = await spawnReplica(shared, { GATEWAY_JOB_POLL_MS: '50', GATEWAY_JOB_LEASE_MS: LEASE_MS });
    victim = spawned.child;
    const doomed = { url: spawned.url, key };

    await createIntegration(doomed, 'crash-openai', SECRET);
    const ids = await startHostedJobs(doomed, 'crash-openai', JOBS);

    // Kill it while it is working: some jobs submitted, not all of them finished.
    await eventually(async () => (fake.state.createJobCalls >= 3 ? true : undefined), 30_000, 5);
    victim.kill('SIGKILL');
    await new Promise((resolve) => victim!.once('exit', resolve));
    const submittedBeforeKill = fake.state.createJobCalls;

    survivor = await startHostedGateway({ fake, database, dataDir, key, env: { GATEWAY_JOB_LEASE_MS: LEASE_MS } });
    const prisma = survivor.gateway.services.db.prisma;
    const unfinishedAtTakeover = await prisma.fineTuningJob.count({ where: { id: { in: ids }, status: { not: 'succeeded' } } });

    await eventually(
      async () => ((await prisma.fineTuningJob.count({ where: { id: { in: ids }, status: 'succeeded' } })) === JOBS ? true : undefined),
      40_000,
      100,
    );

    expect(submittedBeforeKill).toBeLessThan(JOBS + 1);
    expect(unfinishedAtTakeover).toBeGreaterThan(0);
    expect(fake.state.createJobCalls).toBe(JOBS);
    const submittedFor = [...fake.state.jobs.values()].map((j) => j.metadata?.gateway_job_id).sort();
    expect(submittedFor).toEqual([...ids].sort());
    expect(await prisma.fineTuningJob.count({ where: { leaseOwner: { not: null } } })).toBe(0);
  } finally {
    if (victim && victim.exitCode === null && victim.signalCode === null) victim.kill('SIGKILL');
    await survivor?.stop();
    await ground.close();
  }
});
