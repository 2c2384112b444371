/**
 * The GraphQL face of chat and models, on the same service as REST: `chatCompletion` answers from a
 * succeeded job's provider (partials expanded), `models` lists the workspace's fine-tuned models,
 * `FineTuningJob.resultModel` links a succeeded job to its model; an unknown model is NOT_FOUND and
 * credentials cannot travel in the input.
 */
import { randomBytes } from 'node:crypto';
import { useOpenAIGateway } from '../fine-tuning/harness';
import { ChatCompletionDocument, JobResultModelDocument, ModelsDocument } from '../graphql/generated/operations';
import { api, gql } from '../support/gateway';
import { data, run } from '../support/graphql';
import { succeededJob } from './harness';

const SECRET = `sk-fake-${randomBytes(12).toString('hex')}`;

const rig = useOpenAIGateway(SECRET);
let job: { id: string; model: string };

beforeAll(async () => {
  job = await succeededJob(rig.client, '@my-openai');
  await api(rig.gw, 'POST', '/v1/prompts/partials', { body: { name: 'Support tone', string: 'Be kind.' } });
});

it('answers chatCompletion from the job’s provider, partials expanded', async () => {
  const { chatCompletion } = await data(rig.gw, ChatCompletionDocument, {
    input: {
      model: job.model,
      messages: [
        { role: 'SYSTEM' as const, content: '{{>support-tone}}' },
        { role: 'USER' as const, content: 'Hi from GraphQL' },
      ],
      maxTokens: 50,
    },
  });
  expect(chatCompletion).toEqual({
    id: expect.any(String),
    model: job.model,
    created: expect.any(String),
    message: { role: 'assistant', content: `Answer from ${job.model}: Hi from GraphQL`, refusal: null, toolCalls: null },
    finishReason: 'stop',
    usage: { promptTokens: expect.any(Number), completionTokens: expect.any(Number), totalTokens: expect.any(Number) },
  });
  const sent = rig.fake.state.chatRequests.at(-1)!;
  expect(sent.headers.authorization).toBe(`Bearer ${SECRET}`);
  expect(sent.body).toMatchObject({
    model: job.model,
    max_tokens: 50,
    messages: [
      { role: 'system', content: 'Be kind.' },
      { role: 'user', content: 'Hi from GraphQL' },
    ],
  });
});

it('calls a stored integration directly with integration: "@slug", and refuses anything else', async () => {
  const input = { model: 'gpt-4o-mini', messages: [{ role: 'USER' as const, content: 'Direct' }] };
  const { chatCompletion } = await data(rig.gw, ChatCompletionDocument, { input: { ...input, integration: '@my-openai' } });
  expect(chatCompletion.message.content).toBe('Answer from gpt-4o-mini: Direct');
  const refused = await run(rig.gw, ChatCompletionDocument, {
    input: { ...input, integration: 'openai', gatewayOptions: { authorization: `Bearer ${SECRET}` } },
  });
  expect(refused.body.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
  expect(refused.body.errors?.[0].message).toMatch(/^integration: /);
});

it('is NOT_FOUND for a model the workspace does not have', async () => {
  const res = await run(rig.gw, ChatCompletionDocument, { input: { model: 'ft:gpt-4o-mini:nobody', messages: [{ role: 'USER' as const, content: 'x' }] } });
  expect(res.body.errors?.[0]).toMatchObject({ extensions: { code: 'NOT_FOUND' } });
});

it('lists models and links a succeeded job to its model', async () => {
  const { models } = await data(rig.gw, ModelsDocument, {});
  // Fine-tuned models first; the integration's provider models follow (test/chat/integration-models.test.ts).
  expect(models[0]).toEqual({
    id: job.model,
    created: expect.any(String),
    ownedBy: expect.any(String),
    provider: 'openai',
    fineTuningJobId: job.id,
    integration: null,
  });
  expect(models.slice(1).every((m) => m.integration !== null && m.fineTuningJobId === null)).toBe(true);
  const { fineTuningJob } = await data(rig.gw, JobResultModelDocument, { id: job.id });
  expect(fineTuningJob).toEqual({ id: job.id, fineTunedModel: job.model, resultModel: { id: job.model, provider: 'openai', fineTuningJobId: job.id } });
});

it('resolves Model federation references in the caller’s workspace only', async () => {
  const query = 'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Model { id provider fineTuningJobId } } }';
  const r = [
    { __typename: 'Model', id: job.model },
    { __typename: 'Model', id: 'ft:gpt-4o-mini:someone-else' },
  ];
  const res = await gql(rig.gw, query, { r });
  expect(res.body).toEqual({ data: { _entities: [{ id: job.model, provider: 'openai', fineTuningJobId: job.id }, null] } });
});
