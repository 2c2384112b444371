/**
 * Shared by the Vertex AI tests: the adapter as the gateway calls it (a ProviderClient from the
 * registry, its endpoints pointed at the fake Google Cloud), the settings headers of the fake's
 * project, and OpenAI chat datasets with the Gemini lines they must become.
 */
import type { HttpPolicy } from '../../src/providers/http';
import { ProviderRegistry, type ProviderClient } from '../../src/providers/registry';
import type { FakeVertex } from '../fakes/vertex-server';

export const BUCKET = 'fake-bucket';

/** The server configuration pointing the module's three endpoints at the fake. */
export const fakeEndpoints = (fake: FakeVertex) => ({
  GATEWAY_VERTEX_BASE_URL: fake.vertexUrl,
  GATEWAY_GCS_BASE_URL: fake.storageUrl,
  GATEWAY_GOOGLE_TOKEN_URL: fake.tokenUrl,
});

/** Client-mode headers: the fake's service-account key file, project, region and bucket. */
export const vertexHeaders = (fake: FakeVertex): Record<string, string> => ({
  'x-gateway-vertex-service-account-json': JSON.stringify(fake.serviceAccount),
  'x-gateway-vertex-project-id': fake.projectId,
  'x-gateway-vertex-region': fake.location,
  'x-gateway-vertex-storage-bucket-name': BUCKET,
});

export function vertexClient(fake: FakeVertex, options: { headers?: Record<string, string | undefined>; http?: HttpPolicy } = {}): ProviderClient {
  const registry = new ProviderRegistry(fakeEndpoints(fake), { baseDelayMs: 1, timeoutMs: 5_000, ...options.http });
  return registry.client('vertex-ai', { kind: 'headers', headers: { ...vertexHeaders(fake), ...options.headers } });
}

/** An OpenAI chat example and the Gemini tuning example it converts to. */
export function examplePair(n: number, accents = ' — ünïcödé') {
  const openai = {
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: `Question ${n}${accents}` },
      { role: 'assistant', content: [{ type: 'text', text: `Answer ${n}` }] },
    ],
  };
  const gemini = {
    systemInstruction: { parts: [{ text: 'You are terse.' }] },
    contents: [
      { role: 'user', parts: [{ text: `Question ${n}${accents}` }] },
      { role: 'model', parts: [{ text: `Answer ${n}` }] },
    ],
  };
  return { openai, gemini };
}

/** The Gemini lines the gateway stores for `dataset(n)` of test/fine-tuning/harness.ts. */
export const geminiDataset = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify(examplePair(i + 1, '').gemini)).join('\n') + '\n';

export const openaiDataset = (examples: number) => Array.from({ length: examples }, (_, i) => JSON.stringify(examplePair(i + 1).openai)).join('\n') + '\n';

/** A Gemini model tuned on the fake (a tuning job run to its end there): its `projects/…/models/…` resource name. */
export async function tunedOnFake(fake: FakeVertex): Promise<string> {
  fake.putObject(
    BUCKET,
    'tuning/train.jsonl',
    `${JSON.stringify({
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Hello' }] },
      ],
    })}\n`,
  );
  const tuning = await fetch(`${fake.vertexUrl}/projects/${fake.projectId}/locations/${fake.location}/tuningJobs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${fake.issueToken()}`, 'content-type': 'application/json' },
    body: JSON.stringify({ baseModel: 'gemini-2.0-flash-001', supervisedTuningSpec: { trainingDatasetUri: `gs://${BUCKET}/tuning/train.jsonl` } }),
  }).then((r) => r.json() as Promise<{ name: string }>);
  fake.advance(tuning.name);
  return fake.advance(tuning.name).tunedModel!.model;
}
