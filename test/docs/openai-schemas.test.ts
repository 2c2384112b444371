/**
 * The vendored part of OpenAI's API document (test/fixtures/openai) and the validator built on it
 * (test/support/openai-schemas.ts): the fixture is complete and names its source; every gateway
 * operation answering an OpenAI object is mapped to OpenAI's component; the validator refuses what
 * typed OpenAI clients refuse (the defects of issue 20), and so does openapi.yaml where it describes
 * the same object, so the gateway's document is never looser than OpenAI's there.
 */
import fs from 'node:fs';
import { closure, VENDORED_COMPONENTS } from '../../scripts/vendor-openai-schemas';
import { assertOpenAIShape, normalised, OPENAI_ANSWERS, openAIFixturePath } from '../support/openai-schemas';
import { openApiDocument, schemaValidator } from '../support/openapi';

const fixture = JSON.parse(fs.readFileSync(openAIFixturePath, 'utf8'));

const openAIRefuses = (component: string, body: unknown) => expect(() => assertOpenAIShape(component, body, 'test')).toThrow(`not OpenAI's ${component}`);
const projectRefuses = (schema: string, body: unknown) =>
  expect(schemaValidator(`component ${schema}`, { $ref: `#/components/schemas/${schema}` })(body)).toBe(false);

const file = { id: 'file-1', object: 'file', bytes: 120, created_at: 1_700_000_000, filename: 'train.jsonl', purpose: 'fine-tune', status: 'processed' };
const job = {
  id: 'ftjob-1',
  object: 'fine_tuning.job',
  created_at: 1_700_000_000,
  error: null,
  fine_tuned_model: null,
  finished_at: null,
  hyperparameters: { n_epochs: 'auto', batch_size: 'auto', learning_rate_multiplier: 'auto' },
  model: 'gpt-4o-mini',
  organization_id: 'org-1',
  result_files: [],
  status: 'queued',
  trained_tokens: null,
  training_file: 'file-1',
  validation_file: null,
  seed: 0,
  method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 'auto', batch_size: 'auto', learning_rate_multiplier: 'auto' } } },
};

describe('the vendored OpenAI components', () => {
  it('name their source, commit and licence, and hold every component they reference', () => {
    expect(fixture).toMatchObject({
      source: `https://github.com/openai/openai-openapi/blob/${fixture.commit}/openapi.yaml`,
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
      licence: expect.stringMatching(/^MIT/),
      roots: [...VENDORED_COMPONENTS],
    });
    const schemas = fixture.components.schemas;
    expect(Object.keys(closure(schemas, VENDORED_COMPONENTS))).toEqual(Object.keys(schemas));
    expect(fs.readFileSync(openAIFixturePath.replace('components.json', 'README.md'), 'utf8')).toContain(fixture.commit);
  });

  it('compile, every root', () => {
    for (const root of VENDORED_COMPONENTS) expect(() => assertOpenAIShape(root, {}, root)).toThrow(`not OpenAI's ${root}`);
  });

  it("are read in OpenAPI 3.1's dialect: `nullable` and boolean `exclusiveMinimum` translated", () => {
    expect(normalised({ type: 'number', minimum: 0, exclusiveMinimum: true })).toEqual({ type: 'number', exclusiveMinimum: 0 });
    expect(normalised({ type: 'number', minimum: 0, exclusiveMinimum: false })).toEqual({ type: 'number', minimum: 0 });
    expect(normalised({ type: 'string', enum: ['stop'], nullable: true })).toEqual({ anyOf: [{ type: 'string', enum: ['stop'] }, { type: 'null' }] });
    openAIRefuses('FineTuningJob', { ...job, hyperparameters: { learning_rate_multiplier: 0 } });
    assertOpenAIShape(
      'CreateChatCompletionStreamResponse',
      { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: null }] },
      'chunk',
    );
  });
});

describe('the mapping of gateway operations to OpenAI components', () => {
  const operations = Object.values(openApiDocument.paths).flatMap((item: any) => Object.values(item).filter((op: any) => op?.operationId)) as any[];
  /** A 200 answer, following its `$ref` into components. */
  const ok = (op: any) => {
    const answer = op.responses['200'];
    return answer?.$ref ? openApiDocument.components.responses[answer.$ref.split('/').pop()] : answer;
  };

  it('names operations and components that exist', () => {
    const ids = new Set(operations.map((op) => op.operationId));
    for (const [operation, component] of Object.entries(OPENAI_ANSWERS)) {
      expect([operation, ids.has(operation)]).toEqual([operation, true]);
      expect([component, component in fixture.components.schemas]).toEqual([component, true]);
    }
  });

  it('covers every files, fine-tuning, chat, batches and usage operation that answers JSON', () => {
    const openAIShaped = operations.filter(
      (op) => op.tags.some((tag: string) => ['Files', 'Fine-tuning', 'Chat', 'Batches', 'Usage'].includes(tag)) && ok(op)?.content?.['application/json'],
    );
    expect(openAIShaped.map((op) => op.operationId).sort()).toEqual(Object.keys(OPENAI_ANSWERS).sort());
  });
});

describe('what typed OpenAI clients refuse, both documents refuse', () => {
  it('a job without an organisation or a seed', () => {
    for (const broken of [
      { ...job, organization_id: null },
      { ...job, seed: null },
    ]) {
      openAIRefuses('FineTuningJob', broken);
      projectRefuses('FineTuningJob', broken);
    }
  });

  it('a hyperparameter that is neither "auto" nor in range (Azure’s -1)', () => {
    const broken = { ...job, hyperparameters: { ...job.hyperparameters, batch_size: -1 } };
    openAIRefuses('FineTuningJob', broken);
    projectRefuses('FineTuningJob', broken);
  });

  it('a file status of another provider, or a file without its size', () => {
    for (const broken of [
      { ...file, status: 'pending' },
      { ...file, bytes: null },
    ]) {
      openAIRefuses('OpenAIFile', broken);
      projectRefuses('File', broken);
    }
  });

  it('a page of files with a first id but no last id', () => {
    const broken = { object: 'list', data: [file], first_id: file.id, last_id: null, has_more: false };
    openAIRefuses('ListFilesResponse', broken);
    projectRefuses('FileList', broken);
  });

  it('a chat completion with null usage, or a chunk with an unknown finish reason', () => {
    const completion = {
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    };
    assertOpenAIShape('CreateChatCompletionResponse', completion, 'completion');
    openAIRefuses('CreateChatCompletionResponse', { ...completion, usage: null });
    projectRefuses('ChatCompletion', { ...completion, usage: null });
    const chunk = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'done' }] };
    openAIRefuses('CreateChatCompletionStreamResponse', chunk);
    projectRefuses('ChatCompletionChunk', chunk);
  });

  it('but allow what OpenAI’s own service answers, and null ids of an empty page, as the README’s deviations say', () => {
    assertOpenAIShape('OpenAIFile', { ...file, status_details: null }, 'status_details: null');
    assertOpenAIShape('OpenAIFile', { ...file, purpose: 'evals' }, 'purpose: evals');
    openAIRefuses('OpenAIFile', { ...file, purpose: 'everything' });
    assertOpenAIShape('ListFilesResponse', { object: 'list', data: [], first_id: null, last_id: null, has_more: false }, 'empty page');
  });
});
