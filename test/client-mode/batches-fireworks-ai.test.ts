/**
 * Client-mode batches with Fireworks AI on the client-mode batch contract
 * (test/support/client-batch-kit.ts), against the fake Fireworks: the caller's OpenAI file as a
 * dataset, its `{custom_id, body}` dataset and the job `gw-cbatch-…` made from it, the output dataset
 * read back. Here what is Fireworks' own: no cancel in its API (the job is deleted and the answer says
 * so, the batch then read from its datasets), another account's job refused.
 */
import { startFakeFireworks } from '../fakes/fireworks-server';
import { clientBatchContract } from '../support/client-batch-kit';
import { gatewayOnFake } from '../support/gateway';

const KEY = 'fw-client-batch-key-0123456789';
const ACCOUNT = 'acme-labs';
const MODEL = 'accounts/fireworks/models/llama-v3p1-8b-instruct';

const on = gatewayOnFake(
  () => startFakeFireworks({ apiKey: KEY, accountId: ACCOUNT }),
  (fake) => ({ GATEWAY_FIREWORKS_BASE_URL: fake.origin }),
);

describe('client-mode batches with Fireworks AI', () => {
  clientBatchContract({
    gw: () => on.gw,
    provider: 'fireworks-ai',
    headers: () => ({ 'x-gateway-provider': 'fireworks-ai', 'x-gateway-fireworks-account-id': ACCOUNT, authorization: `Bearer ${KEY}` }),
    seen: () => on.fake.state.requests.length,
    model: MODEL,
    failRequests: (ids) => on.fake.batch.refuseRows((customId) => ids.includes(customId)),
    secrets: () => [KEY],
    logs: () => on.logs,
    hostile: [['x-gateway-fireworks-account-id', 'acme/../../x']],
    foreignHandle: 'accounts/another-account/batchInferenceJobs/gw-cbatch-1234',
    // Fireworks has no cancel: the job is deleted, the batch answered as cancelled with the reason in `errors`.
    expire: (handle) => void on.fake.batch.expire(handle.split('/').pop()!),
    fail: (handle) => on.fake.batch.fail(handle.split('/').pop()!),
    cancelled: ['cancelled'],
    after: ({ batch, done }) => {
      const job = [...on.fake.batch.jobs.values()].find((j) => j.name.includes('/gw-cbatch-') && j.state === 'JOB_STATE_COMPLETED')!;
      expect(job).toMatchObject({ model: MODEL });
      expect(done.input_file_id).toBe(batch.input_file_id);
    },
  });
});
