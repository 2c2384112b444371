/**
 * Together's Batch API for the fake Together (together-server.ts), in Together's own shapes: `POST
 * /v1/batches` → **201** `{job, warning?}`; `GET /v1/batches` → a bare array; `GET /v1/batches/{id}`
 * and `POST /v1/batches/{id}/cancel` → the `BatchJob` (`status` upper-case VALIDATING | IN_PROGRESS |
 * COMPLETED | FAILED | EXPIRED | CANCELLED, ISO times, `progress` in percent, no request counts,
 * `error` a string). Input lines are `{custom_id, body}` in a file of purpose `batch-api`; results go
 * to files of purpose `batch-generated`: `{custom_id, response: {status_code, body}}` for successes
 * and `{custom_id, error: {message, code}}` for failures (Together's exact output line is not
 * documented; this is what the gateway must read). One lifecycle step per GET of the batch; cancel
 * ends it `CANCELLED` at once with the requests done so far.
 */
import { randomUUID } from 'node:crypto';
import { chatCompletion, parseChatRequest } from './chat';
import { fakeReply } from './fake-model';
import { isoNow, type FakeHttpError } from './kit';

type Status = 'VALIDATING' | 'IN_PROGRESS' | 'COMPLETED' | 'FAILED' | 'EXPIRED' | 'CANCELLED';

export interface TogetherBatch {
  id: string;
  user_id: string;
  input_file_id: string;
  file_size_bytes: number;
  status: Status;
  job_deadline: string;
  created_at: string;
  completed_at: string | null;
  endpoint: string;
  progress: number;
  model_id: string | null;
  output_file_id: string | null;
  error_file_id: string | null;
  error: string | null;
}

export interface TogetherBatchOptions {
  userId: string;
  files: {
    content(id: string): { content: Buffer; purpose: string } | undefined;
    store(filename: string, purpose: 'batch-generated', content: Buffer): { id: string };
  };
  servable: (model: string) => boolean;
  error: (status: number, message: string, param?: string | null) => FakeHttpError;
}

interface Run {
  lines: { custom_id: string; body: Record<string, unknown> }[];
  results: Map<string, unknown>;
  failures: Map<string, unknown>;
  expire: boolean;
  fail: string | null;
}

const ENDED = new Set<Status>(['COMPLETED', 'FAILED', 'EXPIRED', 'CANCELLED']);

export function togetherBatches(opts: TogetherBatchOptions) {
  const batches = new Map<string, TogetherBatch>();
  const runs = new Map<string, Run>();
  const failing = new Set<string>();
  const state = { createCalls: 0 };
  let linesPerPoll = Number.POSITIVE_INFINITY;

  function find(id: string): TogetherBatch {
    const batch = batches.get(id);
    if (!batch) throw opts.error(404, `Batch job ${id} not found`);
    return batch;
  }

  function create(body: Record<string, unknown>): { job: TogetherBatch } {
    state.createCalls++;
    if (body.endpoint !== '/v1/chat/completions') throw opts.error(400, 'endpoint must be /v1/chat/completions', 'endpoint');
    const fileId = body.input_file_id;
    const file = typeof fileId === 'string' ? opts.files.content(fileId) : undefined;
    if (!file) throw opts.error(400, `Input file ${String(fileId)} not found`, 'input_file_id');
    if (file.purpose !== 'batch-api') throw opts.error(400, 'Input file must be uploaded with purpose "batch-api"', 'input_file_id');
    const batch: TogetherBatch = {
      id: randomUUID(),
      user_id: opts.userId,
      input_file_id: fileId as string,
      file_size_bytes: file.content.length,
      status: 'VALIDATING',
      job_deadline: new Date(Date.now() + 24 * 3600 * 1000).toISOString(),
      created_at: isoNow(),
      completed_at: null,
      endpoint: '/v1/chat/completions',
      progress: 0,
      model_id: typeof body.model_id === 'string' ? body.model_id : null,
      output_file_id: null,
      error_file_id: null,
      error: null,
    };
    batches.set(batch.id, batch);
    runs.set(batch.id, { lines: [], results: new Map(), failures: new Map(), expire: false, fail: null });
    return { job: batch };
  }

  function advance(batch: TogetherBatch): void {
    const run = runs.get(batch.id)!;
    if (ENDED.has(batch.status)) return;
    if (run.fail) {
      Object.assign(batch, { status: 'FAILED', error: run.fail, completed_at: isoNow() });
      return;
    }
    if (batch.status === 'VALIDATING') return validate(batch, run);
    if (run.expire) return finish(batch, run, 'EXPIRED');
    let budget = linesPerPoll;
    for (const line of run.lines) {
      if (budget <= 0) break;
      if (run.results.has(line.custom_id) || run.failures.has(line.custom_id)) continue;
      answer(run, line);
      budget--;
    }
    const done = run.results.size + run.failures.size;
    batch.progress = Math.round((done / run.lines.length) * 100);
    if (done === run.lines.length) finish(batch, run, 'COMPLETED');
  }

  function validate(batch: TogetherBatch, run: Run): void {
    const text = opts.files.content(batch.input_file_id)!.content.toString('utf8');
    for (const raw of text.split('\n').filter((l) => l.trim() !== '')) {
      const line = JSON.parse(raw) as Record<string, any>;
      const model = line.body?.model;
      if (typeof line.custom_id !== 'string' || typeof model !== 'string' || !opts.servable(model)) {
        Object.assign(batch, {
          status: 'FAILED',
          error: `Invalid request line: model ${String(model)} is not available for batch inference`,
          completed_at: isoNow(),
        });
        return;
      }
      run.lines.push({ custom_id: line.custom_id, body: line.body });
    }
    batch.model_id ??= (run.lines[0]?.body.model as string | undefined) ?? null;
    batch.status = 'IN_PROGRESS';
  }

  function answer(run: Run, line: Run['lines'][number]): void {
    if (failing.has(line.custom_id)) {
      run.failures.set(line.custom_id, { custom_id: line.custom_id, error: { message: 'Internal error while running the request', code: 500 } });
      return;
    }
    const request = parseChatRequest(line.body, (message, param) => opts.error(400, message, param));
    const body = chatCompletion(request.model!, fakeReply(request.model!, request.conversation), request.shape);
    run.results.set(line.custom_id, { custom_id: line.custom_id, response: { status_code: 200, body } });
  }

  function finish(batch: TogetherBatch, run: Run, status: Status): void {
    const jsonl = (lines: unknown[]) => Buffer.from(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    if (run.results.size) batch.output_file_id = opts.files.store(`${batch.id}-output.jsonl`, 'batch-generated', jsonl([...run.results.values()])).id;
    if (run.failures.size) batch.error_file_id = opts.files.store(`${batch.id}-error.jsonl`, 'batch-generated', jsonl([...run.failures.values()])).id;
    batch.status = status;
    batch.completed_at = isoNow();
  }

  return {
    state,
    batches,
    create,
    get(id: string) {
      const batch = find(id);
      advance(batch);
      return batch;
    },
    list: () => [...batches.values()],
    /** Allowed in VALIDATING or IN_PROGRESS: ends the batch at once with what is done. */
    cancel(id: string) {
      const batch = find(id);
      if (batch.status === 'CANCELLED') return batch;
      if (ENDED.has(batch.status)) throw opts.error(400, `Batch job ${id} cannot be cancelled in status ${batch.status}`);
      finish(batch, runs.get(id)!, 'CANCELLED');
      return batch;
    },
    failRequests(customIds: readonly string[]) {
      for (const id of customIds) failing.add(id);
    },
    expire(id: string) {
      runs.get(find(id).id)!.expire = true;
    },
    fail(id: string, message = 'The batch failed') {
      runs.get(find(id).id)!.fail = message;
    },
    setLinesPerPoll(n: number) {
      linesPerPoll = n;
    },
  };
}
