/** A provider whose code loads on its first call (src/providers/deferred.ts), as Bedrock's does. */
import { deferredProvider } from '../../src/providers/deferred';
import { defineSettings } from '../../src/providers/settings';
import type { ProviderJob } from '../../src/providers/types';
import type { ProviderEnvironment } from '../../src/providers/module';

const settings = defineSettings({ apiKey: { header: 'authorization', key: 'api_key', secret: true, required: true } });
const env: ProviderEnvironment = { baseUrls: { api: 'http://127.0.0.1:1' }, configured: new Set(), downloadHosts: [], http: {} };
const declaration = { name: 'bedrock', title: 'Deferred test provider', settings, endpoints: {}, operations: ['getJob'] } as const;

function job(id: string, apiKey: string): ProviderJob {
  return { id, model: apiKey, status: 'queued' } as ProviderJob;
}

it('loads its implementation on the first call, once, and connects with the validated settings every call', async () => {
  let loads = 0;
  const provider = deferredProvider({ ...declaration, operations: [...declaration.operations] }, () => {
    loads++;
    return {
      connect: (s, e) => ({ apiKey: s.apiKey, base: e.baseUrls.api }),
      operations: { getJob: async (conn, id) => job(id, `${conn.apiKey}@${conn.base}`) },
    };
  });
  expect(loads).toBe(0);
  expect(Object.keys(provider.operations)).toEqual(['getJob']);
  const first = await provider.operations.getJob?.(provider.connect({ apiKey: 'k1' }, env), 'job-1');
  const second = await provider.operations.getJob?.(provider.connect({ apiKey: 'k2' }, env), 'job-2');
  expect([first?.model, second?.model]).toEqual(['k1@http://127.0.0.1:1', 'k2@http://127.0.0.1:1']);
  expect(loads).toBe(1);
});

it('refuses an implementation whose operations are not the declared ones', async () => {
  const provider = deferredProvider({ ...declaration, operations: ['getJob', 'cancelJob'] }, () => ({
    connect: () => ({}),
    operations: { getJob: async (_conn, id) => job(id, '') },
  }));
  await expect(provider.operations.getJob?.(provider.connect({ apiKey: 'k' }, env), 'job-1')).rejects.toThrow(
    'Deferred test provider declares the operations cancelJob, getJob but implements getJob',
  );
});
