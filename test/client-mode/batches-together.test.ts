/**
 * Client-mode batches with Together AI on the client-mode batch contract
 * (test/support/client-batch-kit.ts), against the fake Together. Here what is Together's own: the
 * caller's OpenAI file stored under Together's `batch-api` purpose but answered `batch`, the
 * `{custom_id, body}` input written beside it (and answered as the caller's file), counts read from
 * the results (Together reports only a percentage), a cancel that ends the batch at once.
 */
import { startFakeTogether } from '../fakes/together-server';
import { clientBatchContract } from '../support/client-batch-kit';
import { gatewayOnFake } from '../support/gateway';

const KEY = 'tg-client-batches-0123456789abcdef';
const MODEL = 'meta-llama/Meta-Llama-3.1-8B-Instruct-Reference';

const on = gatewayOnFake(
  () => startFakeTogether({ apiKey: KEY, userId: 'acme' }),
  (fake) => ({ GATEWAY_TOGETHER_BASE_URL: fake.url }),
);

describe('client-mode batches with Together AI', () => {
  clientBatchContract({
    gw: () => on.gw,
    provider: 'together-ai',
    headers: () => ({ 'x-gateway-provider': 'together-ai', authorization: `Bearer ${KEY}` }),
    seen: () => on.fake.state.requests.length,
    model: MODEL,
    failRequests: (ids) => on.fake.batches.failRequests(ids),
    secrets: () => [KEY],
    logs: () => on.logs,
    hostile: [],
    cancelled: ['cancelled'],
    expire: (handle) => on.fake.batches.expire(handle),
    fail: (handle) => on.fake.batches.fail(handle),
    after: ({ uploaded, done }) => {
      const stored = on.fake.state.files.get(uploaded.id);
      expect(stored?.purpose).toBe('batch-api');
      // Together ran the translated input, written beside the caller's file and named after it.
      const job = [...on.fake.batches.batches.values()].find((b) => b.status === 'COMPLETED')!;
      const input = on.fake.state.files.get(job.input_file_id)!;
      expect(input.filename).toBe(`batch-input_${uploaded.id}.jsonl`);
      const lines = on.fake.state.fileContents
        .get(job.input_file_id)!
        .toString()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines[0]).toEqual({ custom_id: 'req-1', body: expect.objectContaining({ model: MODEL }) });
      expect(lines[0]).not.toHaveProperty('url');
      expect(done.input_file_id).toBe(uploaded.id);
    },
  });
});
