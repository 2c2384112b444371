/**
 * The gateway's batch runner: a background loop in every gateway process that runs batches whose
 * runner is `gateway`. Each tick claims due batches with a row lease (BatchLines: `FOR UPDATE SKIP
 * LOCKED`, so replicas never run one batch at once, and a crashed replica's batches are taken over
 * once their leases expire) and runs each one to its next resting point:
 *
 *   validating  → reads the input file into one row per request → in_progress (or failed);
 *   in_progress → sends the requests through the chat service (the hosted chat path: partials,
 *                 routing, the provider adapters), at most GATEWAY_BATCH_CONCURRENCY at a time per
 *                 integration and model in this process, then → finalizing (or, past its window,
 *                 the rest fail as `batch_expired` → expired);
 *   cancelling  → the unsent requests fail as `batch_cancelled` → cancelled;
 *   finalizing  → writes the output and error files → completed.
 *
 * A request is marked sent before it is sent and finished with its answer, so a runner taking over
 * from a crashed one never repeats a finished request, and fails (never resends) the ones the crash
 * left without an answer: each request reaches the provider at most once. A 429 is waited out (its
 * `Retry-After`, else back-off) without failing the request, and a 5xx or unreachable provider is
 * retried with back-off a few times; both stop at the end of the window or on cancel.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Scope } from '../../auth/scope';
import { keepLease } from '../../db/leases';
import { isDatabaseUnavailable } from '../../db/outage';
import { errorBody, GatewayError, MASKED_INTERNAL } from '../../errors';
import { restPath } from '../../http/case';
import type { Logger } from '../../logger';
import { untrustedInput } from '../../validation/parse';
import { toCompletionJson } from '../chat/chat.mapper';
import type { ChatService } from '../chat/chat.service';
import type { ChatMeter } from '../usage/usage.recorder';
import type { FileService } from '../files/file.service';
import type { BatchRequestLine } from './batch-file';
import { CANCELLED, EXPIRED, failValidation, loadCancelled, loadRequests } from './batch-input';
import { ProviderRunner, type BatchTarget } from './provider-batch';
import type { ProviderBatchRecords } from './provider-batch.repository';
import type { BatchLines, FinishedState, LineOutcome } from './batch-lines.repository';
import type { BatchStatus, GatewayBatch } from './batch.model';
import type { BatchRepository, EventDraft, TransitionData } from './batch.repository';

export interface BatchRunnerOptions {
  /** How often to look for due batches (config.batch.pollMs). */
  pollMs: number;
  /** How long a claimed batch stays claimed without renewal (config.jobLeaseMs). */
  leaseMs: number;
  /** Requests in flight per integration and model in this process (config.batch.concurrency). */
  concurrency: number;
  /** Batches run at once by this process. */
  maxBatches?: number;
  /** First back-off step after a 5xx, doubling per attempt (GATEWAY_BATCH_RETRY_BASE_MS). */
  retryBaseMs: number;
}

export interface BatchRunnerParts {
  batches: BatchRepository;
  lines: BatchLines;
  files: Pick<FileService, 'find' | 'openContent' | 'write'>;
  chat: Pick<ChatService, 'complete'>;
  /** Records a batch's requests in the usage ledger. */
  meter: (batch: GatewayBatch) => ChatMeter;
  /** The usage ledger is on: a provider-run batch's result lines are recorded in it. */
  meterResults: boolean;
  /** The provider runner's bookkeeping. */
  records: ProviderBatchRecords;
  /** Where a batch's requests go (BatchService.target). */
  target: (scope: Scope, batch: GatewayBatch) => Promise<BatchTarget>;
}

/** Attempts for a request the provider answers with a 5xx or cannot be reached for; 429s are waited out. */
const MAX_ATTEMPTS = 4;
/** Output lines read per query while a file is written. */
const WRITE_PAGE = 1000;

const INTERRUPTED = {
  code: 'request_interrupted',
  message: 'The gateway process sending this request stopped before its answer was recorded; it is not sent again, as it may have reached the provider.',
};

/** A batch being sent, with the meter its requests are recorded by. */
type MeteredBatch = GatewayBatch & { meter: ChatMeter };

/** A counting semaphore: requests in flight per integration and model, handed over in arrival order. */
class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(size: number) {
    this.free = size;
  }

  /** Whether a worker waits for a slot (another batch of the same integration and model). */
  get contended(): boolean {
    return this.waiting.length > 0;
  }

  async acquire(): Promise<void> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free += 1;
  }
}

export class BatchRunner {
  /** Identifies this process's leases and the requests it sends. */
  readonly owner = `${os.hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  private readonly running = new Map<string, Promise<void>>();
  private readonly slots = new Map<string, Slots>();
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private ticking = false;
  /** Runs the batches whose runner is `provider`, under the same leases. */
  private readonly provider: ProviderRunner;

  constructor(
    private readonly parts: BatchRunnerParts,
    private readonly logger: Logger,
    private readonly options: BatchRunnerOptions,
  ) {
    this.provider = new ProviderRunner({ ...parts, publish: (scope, batch) => this.publish(scope, batch) }, logger, this.owner);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Looks for work now (a batch was created or cancelled in this process). */
  wake(): void {
    if (!this.stopped) this.schedule(0);
  }

  /**
   * Stops claiming batches and requests; requests in flight get their answers recorded. Batches still
   * running after `graceMs` are handed back at once, so another replica resumes them.
   */
  async stop(graceMs = Number.POSITIVE_INFINITY): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.stopping.abort();
    let timer: NodeJS.Timeout | undefined;
    const overdue = new Promise<true>((resolve) => {
      if (Number.isFinite(graceMs)) timer = setTimeout(() => resolve(true), graceMs);
    });
    const late = await Promise.race([Promise.all(this.running.values()).then(() => false), overdue]);
    clearTimeout(timer);
    if (late) await this.parts.lines.handBackAll(this.owner).catch((err: unknown) => this.logger.error({ err }, 'could not hand back running batches'));
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref();
  }

  /** Claims what this process has room for and starts running it; returns how many were claimed. */
  async tick(): Promise<number> {
    if (this.ticking || this.stopped) return 0;
    this.ticking = true;
    let claimed: GatewayBatch[] = [];
    try {
      claimed = await this.parts.lines.claimDue(this.owner, this.options.leaseMs, (this.options.maxBatches ?? 4) - this.running.size);
      for (const batch of claimed) {
        const run = this.run(batch).finally(() => {
          this.running.delete(batch.id);
          // Room again: the next due batch need not wait for the poll.
          this.wake();
        });
        this.running.set(batch.id, run);
      }
    } catch (err) {
      if (isDatabaseUnavailable(err)) this.logger.warn({ err }, 'database unavailable: batch runner waits');
      else this.logger.error({ err }, 'batch runner could not claim batches');
    } finally {
      this.ticking = false;
      if (!this.stopped) this.schedule(this.options.pollMs);
    }
    return claimed.length;
  }

  /** Runs one claimed batch as far as it goes, renewing its lease meanwhile, and hands it back. */
  private async run(claimed: GatewayBatch): Promise<void> {
    const scope: Scope = { organisationId: claimed.organisationId, workspaceId: claimed.workspaceId };
    const { lines } = this.parts;
    // A lost lease stops this runner claiming requests (claimNext checks it); the new holder fails the ones in flight here.
    const stopRenewing = keepLease(
      () => lines.renewLease(scope, claimed.id, this.owner, this.options.leaseMs),
      this.options.leaseMs,
      () => this.logger.warn({ batchId: claimed.id }, 'batch lease lost to another runner'),
    );
    let delayMs = this.options.pollMs;
    try {
      await this.advance(scope, claimed);
    } catch (err) {
      delayMs = this.options.pollMs * 5;
      if (isDatabaseUnavailable(err)) this.logger.warn({ err, batchId: claimed.id }, 'database unavailable while running a batch; will resume');
      else this.logger.error({ err, batchId: claimed.id }, 'batch step failed; will retry');
    } finally {
      stopRenewing();
      await lines.release(scope, claimed.id, this.owner, this.stopped ? 0 : delayMs).catch((err: unknown) => {
        this.logger.error({ err, batchId: claimed.id }, 'could not hand back a batch; its lease will expire');
      });
    }
  }

  private async advance(scope: Scope, claimed: GatewayBatch): Promise<void> {
    if (claimed.runner === 'provider') return this.provider.advance(scope, claimed);
    let batch: GatewayBatch | null = claimed;
    // Requests a runner before this one sent without recording an answer: possibly sent, never resent.
    const interrupted = await this.parts.lines.failAll(scope, batch.id, 'running', INTERRUPTED);
    if (interrupted) this.logger.warn({ batchId: batch.id, interrupted }, 'batch requests interrupted by a stopped runner were failed');
    if (batch.status === 'validating') batch = await this.load(scope, batch);
    else await loadCancelled(this.parts.files, this.parts.lines, scope, batch);
    if (batch?.status === 'in_progress') batch = await this.send(scope, batch);
    if (batch && !this.stopped) await this.conclude(scope, batch);
  }

  /** validating → in_progress: one row per request of the input file. */
  private async load(scope: Scope, batch: GatewayBatch): Promise<GatewayBatch | null> {
    const { files, lines, batches } = this.parts;
    const loaded = await loadRequests(files, lines, scope, batch);
    if ('error' in loaded) return failValidation(batches, scope, batch, loaded.error);
    const { total } = loaded;
    const event: EventDraft = {
      level: 'info',
      message: `Validated ${total} requests: the gateway sends them to ${batch.provider} with integration @${batch.integrationSlug}, at most ${this.options.concurrency} at a time`,
      data: { runner: batch.runner, request_counts: { total, completed: 0, failed: 0 } },
    };
    return (await batches.transition(scope, batch.id, ['validating'], 'in_progress', event, { requestTotal: total })) ?? batches.findById(scope, batch.id);
  }

  /** Sends the pending requests with bounded concurrency; the batch as it stands after. */
  private async send(scope: Scope, claimed: GatewayBatch): Promise<GatewayBatch | null> {
    const batch = { ...claimed, meter: this.parts.meter(claimed) };
    const key = `${batch.provider}\u0000${batch.integrationSlug}\u0000${batch.model}`;
    let slots = this.slots.get(key);
    if (!slots) this.slots.set(key, (slots = new Slots(this.options.concurrency)));
    // A worker that fails (the database away) halts the others, and the batch is handed back only once
    // none has a request in flight: the next runner fails the requests found running, so a worker still
    // sending after the hand-back would lose its answer.
    const halt = new AbortController();
    const workers = Array.from({ length: this.options.concurrency }, () =>
      this.work(scope, batch, slots, halt.signal).catch((err: unknown) => {
        halt.abort();
        throw err;
      }),
    );
    const failure = (await Promise.allSettled(workers)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) throw failure.reason;
    return this.parts.batches.findById(scope, batch.id);
  }

  /** One worker: requests sent one after the other, each within a slot; until none is left, the batch stops or `halt` is raised. */
  private async work(scope: Scope, batch: MeteredBatch, slots: Slots, halt: AbortSignal): Promise<void> {
    for (let more = true; more && !this.stopping.signal.aborted && !halt.aborted;) {
      await slots.acquire();
      try {
        more = await this.sendWhileFree(scope, batch, slots, halt);
      } finally {
        slots.release();
      }
    }
  }

  /**
   * Holding a slot: claims a request and sends it, then finishes it and claims the next in one
   * statement, for as long as no other batch waits for the slot. A request is claimed only with a
   * slot in hand, so a crash fails (as interrupted) only requests that were in flight. False when no
   * request is left to claim (or the batch stopped).
   */
  private async sendWhileFree(scope: Scope, batch: MeteredBatch, slots: Slots, halt: AbortSignal): Promise<boolean> {
    const { lines } = this.parts;
    let line = await lines.claim(scope, batch.id, this.owner);
    while (line) {
      const outcome = await this.call(scope, batch, line);
      if (!outcome) {
        await lines.giveBack(scope, batch.id, line.line, this.owner);
        return true;
      }
      const keep = !slots.contended && !this.stopping.signal.aborted && !halt.aborted;
      const next = await lines.finish(scope, batch.id, line.line, this.owner, outcome, keep);
      if (!keep) return true;
      line = next;
    }
    return false;
  }

  /** The request's outcome, or null when it was never answered and is given back (the batch stopped while a 429 was waited out). */
  private async call(scope: Scope, batch: MeteredBatch, line: BatchRequestLine): Promise<LineOutcome | null> {
    const id = `batch_req_${randomBytes(12).toString('hex')}`;
    for (let attempt = 1; ; attempt++) {
      try {
        const { answer } = await this.parts.chat.complete(
          () => Promise.resolve(scope),
          batch.gatewayOptions,
          // OpenAI's request as written in the file, as the chat route takes it (snake_case, relayed, not converted).
          untrustedInput(line.body),
          new AbortController().signal,
          batch.meter,
        );
        if (answer.stream) throw new GatewayError('internal', 'A batch request was answered as a stream');
        const body = toCompletionJson(answer.completion);
        const usage = answer.completion.usage;
        return {
          succeeded: true,
          output: { id, custom_id: line.customId, response: { status_code: 200, request_id: body.id, body }, error: null },
          inputTokens: usage?.promptTokens ?? 0,
          outputTokens: usage?.completionTokens ?? 0,
        };
      } catch (err) {
        const wait = this.retryWait(err, attempt);
        if (wait !== null && Date.now() + wait < batch.expiresAt.getTime()) {
          if (!(await this.pause(wait)) || !(await this.stillRunning(scope, batch))) return null;
          continue;
        }
        return this.failure(id, line, err, batch);
      }
    }
  }

  /** How long to wait before sending the request again, or null when it fails now. */
  private retryWait(err: unknown, attempt: number): number | null {
    if (!(err instanceof GatewayError) || err.kind !== 'provider') return null;
    const backOff = Math.min(this.options.retryBaseMs * 2 ** (attempt - 1), 60_000);
    if (err.status === 429) return err.retryAfterSeconds !== null ? err.retryAfterSeconds * 1000 : backOff;
    return err.status >= 500 && attempt < MAX_ATTEMPTS ? backOff : null;
  }

  /** Waits, unless the process stops first (false). */
  private async pause(ms: number): Promise<boolean> {
    try {
      await sleep(ms, undefined, { signal: this.stopping.signal });
      return true;
    } catch {
      return false;
    }
  }

  private async stillRunning(scope: Scope, batch: GatewayBatch): Promise<boolean> {
    return (await this.parts.batches.findById(scope, batch.id))?.status === 'in_progress';
  }

  /** A request that failed: the provider's status and error body in the error file (the gateway's own failures masked). */
  private failure(id: string, line: BatchRequestLine, err: unknown, batch: GatewayBatch): LineOutcome {
    if (!(err instanceof GatewayError)) this.logger.error({ err, batchId: batch.id, line: line.line }, 'batch request failed in the gateway');
    const known = err instanceof GatewayError ? err : MASKED_INTERNAL;
    const response = { status_code: known.status, request_id: id, body: errorBody(known, restPath) };
    return { succeeded: false, output: { id, custom_id: line.customId, response, error: null }, inputTokens: 0, outputTokens: 0 };
  }

  /** Ends a batch whose requests are done, cancelled or out of time: the rest fail, the files are written. */
  private async conclude(scope: Scope, batch: GatewayBatch): Promise<void> {
    const { lines, batches } = this.parts;
    let from: BatchStatus = batch.status;
    let to: BatchStatus;
    if (batch.status === 'cancelling') {
      await lines.failAll(scope, batch.id, 'pending', CANCELLED);
      to = 'cancelled';
    } else if (batch.status === 'in_progress' && batch.expiresAt.getTime() <= Date.now()) {
      await lines.failAll(scope, batch.id, 'pending', EXPIRED);
      to = 'expired';
    } else if (batch.status === 'in_progress') {
      // Requests left unclaimed: another step will send them (the lease was lost meanwhile).
      if ((await lines.count(scope, batch.id, 'pending')) > 0) return;
      const event: EventDraft = { level: 'info', message: 'Every request is done: writing the output and error files' };
      if (!(await batches.transition(scope, batch.id, ['in_progress'], 'finalizing', event))) return;
      from = 'finalizing';
      to = 'completed';
    } else if (batch.status === 'finalizing') {
      to = 'completed';
    } else return;
    const files = await this.publish(scope, batch);
    const now = await batches.findById(scope, batch.id);
    const counts = now?.requestCounts ?? batch.requestCounts;
    const event: EventDraft = {
      level: to === 'completed' ? 'info' : 'warn',
      message: `Batch ${to}: ${counts.completed} requests succeeded, ${counts.failed} failed`,
      data: { request_counts: counts },
    };
    await batches.transition(scope, batch.id, [from], to, event, files);
  }

  /** Writes the output file (succeeded requests) and the error file (failed ones), each only when it has lines. */
  private async publish(scope: Scope, batch: GatewayBatch): Promise<TransitionData> {
    const out: TransitionData = {};
    for (const [state, column, suffix] of [
      ['succeeded', 'outputFileId', 'output'],
      ['failed', 'errorFileId', 'error'],
    ] as const) {
      if ((await this.parts.lines.count(scope, batch.id, state)) === 0) continue;
      const file = await this.parts.files.write(scope, {
        filename: `batch_${batch.id}_${suffix}.jsonl`,
        purpose: 'batch_output',
        stream: Readable.from(this.outputLines(scope, batch.id, state)),
      });
      out[column] = file.id;
    }
    return out;
  }

  private async *outputLines(scope: Scope, batchId: string, state: FinishedState): AsyncGenerator<string> {
    for (let after = 0; ;) {
      const page = await this.parts.lines.page(scope, batchId, state, after, WRITE_PAGE);
      if (!page.length) return;
      yield page.map((row) => `${JSON.stringify(row.output)}\n`).join('');
      after = page[page.length - 1].line;
    }
  }
}
