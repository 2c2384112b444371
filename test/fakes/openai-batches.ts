/**
 * OpenAI's Batch API as the fakes of OpenAI and Azure OpenAI speak it (`/batches`, `/batches/{id}`,
 * `/batches/{id}/cancel`, input and output through the fake's own `/files`): the input file's
 * `BatchRequestInput` lines are checked when the batch leaves `validating` (one model, the batch's
 * url, unique `custom_id`s), then run `linesPerPoll` at a time per GET of the batch, each answered by
 * the fake model; results go to an output file (`purpose: "batch_output"`) and failures to an error
 * file, as OpenAI writes them. Cancel → `cancelling`, and `cancelled` on the next GET with the lines
 * done so far; `expire(id)` ends it `expired` with the rest as `batch_expired`; `fail(id)` fails it.
 */
import { randomBytes } from 'node:crypto';
import { chatCompletion, parseChatRequest } from './chat';
import { fakeReply } from './fake-model';
import { cursorPage, type FakeHttpError } from './kit';

type Status = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

export interface FakeBatch {
  id: string;
  object: 'batch';
  endpoint: string;
  model: string | null;
  errors: { object: 'list'; data: { code: string; message: string; param: string | null; line: number | null }[] } | null;
  input_file_id: string;
  completion_window: string;
  status: Status;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  usage: {
    input_tokens: number;
    input_tokens_details: { cached_tokens: number };
    output_tokens: number;
    output_tokens_details: { reasoning_tokens: number };
    total_tokens: number;
  };
  metadata: Record<string, string> | null;
}

interface InputLine {
  custom_id: string;
  body: Record<string, unknown>;
}

interface OutputLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: unknown } | null;
  error: { code: string; message: string } | null;
}

interface Run {
  lines: InputLine[];
  done: string[];
  failed: string[];
  expire: boolean;
  failure: { code: string; message: string } | null;
}

export interface BatchFiles {
  content(id: string): { content: Buffer; purpose: string } | undefined;
  store(filename: string, purpose: string, content: Buffer): { id: string };
}

export interface FakeBatchOptions {
  files: BatchFiles;
  /** The model each line must name: any chat model (OpenAI), or a Global-Batch deployment (Azure). */
  servable: (model: string) => boolean;
  /** The create `endpoint` values accepted (Azure writes `/chat/completions`). */
  endpoints: readonly string[];
  error: (status: number, message: string, param?: string | null, code?: string | null) => FakeHttpError;
  /** Lines run per GET of an in-progress batch (default: all). */
  linesPerPoll?: number;
  /** Azure: even a batch without failures gets an (empty) error file. */
  alwaysErrorFile?: boolean;
}

const now = () => Math.floor(Date.now() / 1000);
const DAY = 24 * 60 * 60;

export function fakeBatches(opts: FakeBatchOptions) {
  const batches = new Map<string, FakeBatch>();
  const runs = new Map<string, Run>();
  /** custom_ids whose requests fail with this status. */
  const failing = new Map<string, number>();
  /** custom_ids whose output line is written without its `custom_id` (a provider that changed its format). */
  const unlabelled = new Set<string>();
  const state = { createCalls: 0, cancelCalls: 0, linesRun: 0 };
  let linesPerPoll = opts.linesPerPoll ?? Number.POSITIVE_INFINITY;

  function find(id: string): FakeBatch {
    const batch = batches.get(id);
    if (!batch) throw opts.error(404, `No batch found with id '${id}'.`, null, 'batch_not_found');
    return batch;
  }

  function create(body: Record<string, unknown>): FakeBatch {
    state.createCalls++;
    const inputFileId = body.input_file_id;
    if (typeof inputFileId !== 'string') throw opts.error(400, "Missing required parameter: 'input_file_id'.", 'input_file_id');
    const file = opts.files.content(inputFileId);
    if (!file) throw opts.error(400, `Invalid 'input_file_id': file '${inputFileId}' does not exist.`, 'input_file_id');
    if (file.purpose !== 'batch') throw opts.error(400, `File '${inputFileId}' has purpose '${file.purpose}', expected 'batch'.`, 'input_file_id');
    if (typeof body.endpoint !== 'string' || !opts.endpoints.includes(body.endpoint))
      throw opts.error(400, `Invalid value for 'endpoint': ${String(body.endpoint)}.`, 'endpoint', 'invalid_value');
    if (body.completion_window !== '24h') throw opts.error(400, "Invalid value for 'completion_window': expected '24h'.", 'completion_window', 'invalid_value');
    const created = now();
    const batch: FakeBatch = {
      id: `batch_${randomBytes(12).toString('hex')}`,
      object: 'batch',
      endpoint: body.endpoint,
      model: null,
      errors: null,
      input_file_id: inputFileId,
      completion_window: '24h',
      status: 'validating',
      output_file_id: null,
      error_file_id: null,
      created_at: created,
      in_progress_at: null,
      expires_at: created + DAY,
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      request_counts: { total: 0, completed: 0, failed: 0 },
      usage: { input_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 },
      metadata: (body.metadata as Record<string, string> | undefined) ?? null,
    };
    batches.set(batch.id, batch);
    runs.set(batch.id, { lines: [], done: [], failed: [], expire: false, failure: null });
    return batch;
  }

  /** One lifecycle step, as a GET of the batch sees it. */
  function advance(batch: FakeBatch): void {
    const run = runs.get(batch.id)!;
    if (run.failure && batch.status !== 'failed') return failWith(batch, [{ ...run.failure, param: null, line: null }]);
    if (batch.status === 'validating') return validate(batch, run);
    if (batch.status === 'cancelling') return finish(batch, run, 'cancelled');
    if (batch.status === 'in_progress' && run.expire) return finish(batch, run, 'expired');
    if (batch.status === 'in_progress') {
      let budget = linesPerPoll;
      for (const line of run.lines) {
        if (budget <= 0) break;
        if (run.done.includes(line.custom_id) || run.failed.includes(line.custom_id)) continue;
        runLine(batch, run, line);
        budget--;
      }
      if (run.done.length + run.failed.length === run.lines.length) {
        batch.status = 'finalizing';
        batch.finalizing_at = now();
      }
      return;
    }
    if (batch.status === 'finalizing') finish(batch, run, 'completed');
  }

  function validate(batch: FakeBatch, run: Run): void {
    const text = opts.files.content(batch.input_file_id)!.content.toString('utf8');
    const lines = text.split('\n').filter((l) => l.trim() !== '');
    const errors: NonNullable<FakeBatch['errors']>['data'] = [];
    const ids = new Set<string>();
    lines.forEach((raw, i) => {
      const at = (code: string, message: string) => errors.push({ code, message, param: null, line: i + 1 });
      let line: Record<string, any>;
      try {
        line = JSON.parse(raw);
      } catch {
        return at('invalid_json_line', 'This line is not parseable as valid JSON.');
      }
      if (typeof line.custom_id !== 'string' || ids.has(line.custom_id))
        return at('duplicate_custom_id', 'The custom_id for this request is a duplicate or missing.');
      ids.add(line.custom_id);
      if (line.method !== 'POST' || !opts.endpoints.includes(normalisedUrl(line.url)))
        return at('url_mismatch', 'The url provided for this request does not match the batch endpoint.');
      const model = line.body?.model;
      if (typeof model !== 'string' || !opts.servable(model))
        return at('model_not_found', `The provided model '${String(model)}' is not supported by the Batch API.`);
      if (batch.model === null) batch.model = model;
      else if (batch.model !== model) return at('model_mismatch', 'The provided model differs from the model of the batch.');
      run.lines.push({ custom_id: line.custom_id, body: line.body });
    });
    if (!lines.length) errors.push({ code: 'empty_file', message: 'The input file is empty.', param: null, line: null });
    if (errors.length) return failWith(batch, errors);
    batch.request_counts.total = run.lines.length;
    batch.status = 'in_progress';
    batch.in_progress_at = now();
  }

  /** Azure writes `/chat/completions` for the endpoint while its lines say `/v1/chat/completions`. */
  const normalisedUrl = (url: unknown) => (typeof url === 'string' && opts.endpoints.includes(url) ? url : String(url).replace(/^\/v1/, ''));

  function runLine(batch: FakeBatch, run: Run, line: InputLine): void {
    state.linesRun++;
    const status = failing.get(line.custom_id);
    if (status !== undefined) {
      run.failed.push(line.custom_id);
      batch.request_counts.failed++;
      return;
    }
    const request = parseChatRequest(line.body, (message, param, code) => opts.error(400, message, param, code));
    const completion = chatCompletion(request.model!, fakeReply(request.model!, request.conversation), request.shape);
    const usage = completion.usage as { prompt_tokens: number; completion_tokens: number };
    batch.usage.input_tokens += usage.prompt_tokens;
    batch.usage.output_tokens += usage.completion_tokens;
    batch.usage.total_tokens += usage.prompt_tokens + usage.completion_tokens;
    run.done.push(line.custom_id);
    batch.request_counts.completed++;
    outputs.set(`${batch.id}\u0000${line.custom_id}`, completion);
  }
  const outputs = new Map<string, unknown>();

  function failWith(batch: FakeBatch, errors: NonNullable<FakeBatch['errors']>['data']): void {
    batch.status = 'failed';
    batch.failed_at = now();
    batch.errors = { object: 'list', data: errors };
  }

  /** Ends the batch: the output file (lines done), the error file (failed ones, and the unrun ones when it expired). */
  function finish(batch: FakeBatch, run: Run, status: 'completed' | 'cancelled' | 'expired'): void {
    const requestId = () => `req_${randomBytes(8).toString('hex')}`;
    const out = run.done.map((customId) => ({
      id: `batch_req_${randomBytes(8).toString('hex')}`,
      ...(unlabelled.has(customId) ? {} : { custom_id: customId }),
      response: { status_code: 200, request_id: requestId(), body: outputs.get(`${batch.id}\u0000${customId}`) },
      error: null,
    }));
    const errors: OutputLine[] = run.failed.map((customId) => {
      const code = failing.get(customId)!;
      const body = {
        error: { message: `The request failed with status ${code}.`, type: code >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null },
      };
      return {
        id: `batch_req_${randomBytes(8).toString('hex')}`,
        custom_id: customId,
        response: { status_code: code, request_id: requestId(), body },
        error: null,
      };
    });
    if (status === 'expired') {
      for (const line of run.lines.filter((l) => !run.done.includes(l.custom_id) && !run.failed.includes(l.custom_id))) {
        errors.push({
          id: `batch_req_${randomBytes(8).toString('hex')}`,
          custom_id: line.custom_id,
          response: null,
          error: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' },
        });
      }
    }
    const jsonl = (lines: unknown[]) => Buffer.from(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    if (out.length) batch.output_file_id = opts.files.store(`${batch.id}_output.jsonl`, 'batch_output', jsonl(out)).id;
    if (errors.length || opts.alwaysErrorFile) batch.error_file_id = opts.files.store(`${batch.id}_error.jsonl`, 'batch_output', jsonl(errors)).id;
    batch.status = status;
    batch[`${status}_at`] = now();
  }

  function cancel(id: string): FakeBatch {
    state.cancelCalls++;
    const batch = find(id);
    if (batch.status === 'cancelling' || batch.status === 'cancelled') return batch;
    if (!['validating', 'in_progress', 'finalizing'].includes(batch.status))
      throw opts.error(400, `Cannot cancel a batch with status '${batch.status}'.`, null);
    batch.status = 'cancelling';
    batch.cancelling_at = now();
    return batch;
  }

  return {
    state,
    batches,
    create,
    find,
    /** GET: the batch one lifecycle step further. */
    get(id: string): FakeBatch {
      const batch = find(id);
      advance(batch);
      return batch;
    },
    cancel,
    list(query: URLSearchParams) {
      const list = cursorPage([...batches.values()].reverse(), query, 20, () => opts.error(400, 'Invalid limit', 'limit'));
      return { ...list, first_id: list.data[0]?.id ?? null, last_id: list.data.at(-1)?.id ?? null };
    },
    /** Requests with these custom_ids fail with `status` (in the error file). */
    failRequests(customIds: readonly string[], status = 500) {
      for (const id of customIds) failing.set(id, status);
    },
    /** The output lines of requests with these custom_ids leave `custom_id` out. */
    unlabelResults(customIds: readonly string[]) {
      for (const id of customIds) unlabelled.add(id);
    },
    /** The batch's next step ends it `expired`. */
    expire(id: string) {
      runs.get(find(id).id)!.expire = true;
    },
    /** The batch's next step ends it `failed` with this error. */
    fail(id: string, failure = { code: 'internal_error', message: 'The batch failed at the provider.' }) {
      runs.get(find(id).id)!.failure = failure;
    },
    setLinesPerPoll(n: number) {
      linesPerPoll = n;
    },
  };
}
