/**
 * The provider runner: a batch whose runner is `provider` is handed whole to the provider's own batch
 * service (the module's `batch` steps, src/providers/batch.ts) and followed from the batch runner's
 * leases, one step per claim:
 *
 *   validating (not submitted) → requests loaded into `batch_lines`, translated and uploaded (the
 *       provider's reference stored at once), then the job created once: the attempt is counted
 *       before the call, and a later attempt first looks for the job an interrupted one created;
 *   submitted → the provider's status (mapped to OpenAI's) and counts mirrored on the batch; past the
 *       window, or `cancelling`, the provider is asked to stop;
 *   ended at the provider → every result line read and recorded on its request by `custom_id`, the
 *       requests without one failed as `batch_cancelled` / `batch_expired`, counts and usage summed,
 *       the output and error files written to the gateway's file store → completed, cancelled or expired.
 *
 * A provider's refusal (a 4xx other than 429) of the upload or the create fails the batch with its
 * message; anything else (5xx, unreachable, 429) is retried at the next claim.
 */
import type { Scope } from '../../auth/scope';
import { GatewayError } from '../../errors';
import type { Logger } from '../../logger';
import type { ProviderBatchJob, ProviderBatchStatus } from '../../providers/batch';
import type { ProviderClient } from '../../providers/registry';
import type { BatchCallFacts } from '../usage/batch-usage';
import type { FileService } from '../files/file.service';
import { CANCELLED, EXPIRED, failValidation, loadCancelled, loadRequests } from './batch-input';
import type { BatchLines } from './batch-lines.repository';
import type { BatchStatus, GatewayBatch } from './batch.model';
import type { BatchRepository, EventDraft, TransitionData } from './batch.repository';
import type { ProviderBatchRecords } from './provider-batch.repository';

/** Where a batch's requests go: the provider client (integration credentials) and the model as the provider knows it. */
export interface BatchTarget {
  client: ProviderClient;
  model: string;
  hosted: boolean;
  /** A fine-tuned model's base model (the usage ledger's), else null. */
  baseModel: string | null;
}

export interface ProviderRunnerParts {
  batches: BatchRepository;
  lines: BatchLines;
  records: ProviderBatchRecords;
  files: Pick<FileService, 'find' | 'openContent'>;
  /** The batch's target, resolved again on every step (the integration's credentials may have changed). */
  target: (scope: Scope, batch: GatewayBatch) => Promise<BatchTarget>;
  /** Writes the output and error files from the recorded requests (the gateway runner's own). */
  publish: (scope: Scope, batch: GatewayBatch) => Promise<TransitionData>;
  /** The usage ledger is on: the provider's result lines are recorded in it as batch calls. */
  meterResults: boolean;
}

/** Provider statuses after which the job does nothing more. */
const ENDED: ReadonlySet<ProviderBatchStatus> = new Set(['completed', 'expired', 'cancelled', 'failed']);

export class ProviderRunner {
  constructor(
    private readonly parts: ProviderRunnerParts,
    private readonly logger: Logger,
    private readonly owner: string,
  ) {}

  /** Takes the batch one step further (see the file comment). */
  async advance(scope: Scope, batch: GatewayBatch): Promise<void> {
    const target = await this.parts.target(scope, batch);
    let job: ProviderBatchJob | null | undefined;
    if (batch.remote.batchId !== null) job = await target.client.getBatch(batch.remote.batchId);
    else if (batch.status === 'validating') job = await this.submit(scope, batch, target);
    else job = batch.remote.submitAttempts > 0 && target.client.supportsBatches('find') ? await target.client.findBatch(batch.id) : undefined;
    const now = await this.parts.batches.findById(scope, batch.id);
    if (!now) return;
    if (job) await this.follow(scope, now, target, job);
    else if (now.status === 'cancelling') {
      await loadCancelled(this.parts.files, this.parts.lines, scope, now);
      await this.conclude(scope, now, 'cancelled');
    }
  }

  /** Loads, uploads and creates the provider job; null when the batch failed or stopped meanwhile. */
  private async submit(scope: Scope, batch: GatewayBatch, target: BatchTarget): Promise<ProviderBatchJob | null> {
    const { records, batches } = this.parts;
    const loaded = await loadRequests(this.parts.files, this.parts.lines, scope, batch);
    if ('error' in loaded) return failValidation(batches, scope, batch, loaded.error);
    const count = loaded.total;
    try {
      let input = batch.remote.inputFile;
      if (input === null) {
        input = await target.client.uploadBatch({ gatewayBatchId: batch.id, model: target.model, count, requests: () => records.requests(scope, batch.id) });
        await records.saveInput(scope, batch.id, input);
        await this.note(scope, batch, `Uploaded ${count} requests to ${target.client.title}`, { provider_input: input });
      }
      let job = batch.remote.submitAttempts > 0 && target.client.supportsBatches('find') ? await target.client.findBatch(batch.id) : undefined;
      if (job) this.logger.info({ batchId: batch.id, providerBatchId: job.id }, 'found the provider batch of an interrupted submission');
      if (!job) {
        // Counted before the call: whoever resumes this batch after a crash looks for the job first.
        if (!(await records.beginSubmit(scope, batch.id, this.owner))) return null;
        job = await target.client.createBatch({ gatewayBatchId: batch.id, model: target.model, input, count });
      }
      const kept = await records.saveJob(scope, batch.id, job.id);
      if (kept !== job.id) {
        // Another process submitted too (its lease outlived ours): keep theirs, withdraw ours.
        await target.client.cancelBatch(job.id).catch(() => undefined);
        return null;
      }
      await batches.transition(
        scope,
        batch.id,
        ['validating'],
        'validating',
        {
          level: 'info',
          message: `Submitted ${count} requests to ${target.client.title}'s batch service`,
          data: { runner: 'provider', provider_batch_id: job.id, request_counts: { total: count, completed: 0, failed: 0 } },
        },
        { requestTotal: count },
      );
      return job;
    } catch (err) {
      const refusal = providerRefusal(err);
      if (!refusal) throw err;
      return failValidation(batches, scope, batch, { code: refusal.code ?? 'provider_refused', message: refusal.message, param: null, line: null });
    }
  }

  /** Mirrors the provider's job on the batch, stops it when asked or out of time, and concludes it once it has ended. */
  private async follow(scope: Scope, batch: GatewayBatch, target: BatchTarget, job: ProviderBatchJob): Promise<void> {
    const overdue = batch.expiresAt.getTime() <= Date.now();
    if ((batch.status === 'cancelling' || overdue) && !ENDED.has(job.status) && job.status !== 'cancelling') {
      job = await target.client.cancelBatch(job.id);
    }
    if (job.requestCounts) await this.parts.records.setCounts(scope, batch.id, job.requestCounts);
    if (job.status === 'failed') {
      const error = job.error ?? { code: 'provider_failed', message: `${target.client.title} failed the batch` };
      await this.parts.batches.transition(
        scope,
        batch.id,
        ['validating', 'in_progress', 'finalizing', 'cancelling'],
        'failed',
        {
          level: 'error',
          message: `${target.client.title} failed the batch: ${error.message}`,
        },
        { errors: [{ ...error, param: null, line: null }] },
      );
      return;
    }
    if (ENDED.has(job.status)) return this.readOutput(scope, batch, target, job, overdue);
    // Past the window the provider's `cancelling` is the stop asked above (the batch expires), not a cancel from elsewhere.
    const next = overdue ? null : mirrored(batch.status, job.status);
    if (next)
      await this.parts.batches.transition(scope, batch.id, [batch.status], next, {
        level: 'info',
        message: `${target.client.title} reports the batch ${job.status.replace('_', ' ')}`,
        data: { runner: 'provider', ...(job.requestCounts ? { request_counts: { ...job.requestCounts } } : {}) },
      });
  }

  /** The provider's job has ended: its results recorded, the rest failed, the files written. */
  private async readOutput(scope: Scope, batch: GatewayBatch, target: BatchTarget, job: ProviderBatchJob, overdue: boolean): Promise<void> {
    let final: BatchStatus;
    if (batch.status === 'cancelling' || job.status === 'cancelled') final = overdue && batch.status !== 'cancelling' ? 'expired' : 'cancelled';
    else if (job.status === 'expired') final = 'expired';
    else final = 'completed';
    if (final === 'completed' && batch.status !== 'finalizing') {
      const moved = await this.parts.batches.transition(scope, batch.id, [batch.status], 'finalizing', {
        level: 'info',
        message: `${target.client.title} finished the batch: reading its results`,
      });
      if (!moved) return;
      batch = moved;
    }
    const usage = this.parts.meterResults ? callFacts(batch, target) : null;
    let unread: { code: string; message: string } | undefined;
    try {
      const unmatched = await this.parts.records.record(scope, batch.id, target.client.batchOutput(job), usage);
      if (unmatched) this.logger.warn({ batchId: batch.id, unmatched }, 'provider batch results matched no request of the batch');
    } catch (err) {
      // Reading again would meet the same answer at every claim and leave the batch finalizing for ever:
      // the results read so far stay, the requests without one fail with the reason.
      if (!(err instanceof GatewayError) || err.code !== 'provider_bad_answer') throw err;
      this.logger.warn({ batchId: batch.id, err: err.message }, 'provider batch results could not be read');
      unread = { code: err.code, message: err.message };
    }
    await this.conclude(scope, batch, final, unread);
  }

  /** The requests without a result fail (`unread`, else cancelled / expired), the counts are summed, the files written. */
  private async conclude(scope: Scope, batch: GatewayBatch, final: BatchStatus, unread?: { code: string; message: string }): Promise<void> {
    const { lines, records, batches } = this.parts;
    await lines.failAll(scope, batch.id, 'pending', unread ?? (final === 'expired' ? EXPIRED : CANCELLED));
    await records.settle(scope, batch.id);
    const files = await this.parts.publish(scope, batch);
    const counts = (await batches.findById(scope, batch.id))?.requestCounts ?? batch.requestCounts;
    const event: EventDraft = {
      level: final === 'completed' ? 'info' : 'warn',
      message: `Batch ${final}: ${counts.completed} requests succeeded, ${counts.failed} failed`,
      data: { runner: 'provider', request_counts: counts },
    };
    await batches.transition(scope, batch.id, [batch.status], final, event, files);
  }

  private async note(scope: Scope, batch: GatewayBatch, message: string, data: Record<string, string>): Promise<void> {
    await this.parts.batches.transition(scope, batch.id, ['validating'], 'validating', { level: 'info', message, data: { runner: 'provider', ...data } });
  }
}

/** What the ledger rows of a batch's results share: recorded for the key that created it, under the model it names. */
const callFacts = (batch: GatewayBatch, target: BatchTarget): BatchCallFacts => ({
  organisationId: batch.organisationId,
  workspaceId: batch.workspaceId,
  apiKeyId: batch.apiKeyId,
  provider: batch.provider,
  integration: batch.integrationSlug,
  model: batch.model,
  baseModel: target.baseModel,
  mode: target.hosted ? 'hosted' : 'client',
});

/** The status a running batch moves to when the provider reports `remote`, or null when it stays. */
function mirrored(local: BatchStatus, remote: ProviderBatchStatus): BatchStatus | null {
  if (local === 'cancelling') return null;
  if (remote === 'in_progress' && local === 'validating') return 'in_progress';
  if (remote === 'finalizing' && (local === 'validating' || local === 'in_progress')) return 'finalizing';
  // The provider was told to cancel elsewhere (its own console): shown as it is.
  if (remote === 'cancelling') return 'cancelling';
  return null;
}

/** A provider's refusal of the request itself (a 4xx other than 429), which repeating cannot fix. */
function providerRefusal(err: unknown): GatewayError | null {
  if (!(err instanceof GatewayError)) return null;
  const transient = err.status === 429 || err.status === 408 || err.status >= 500;
  return transient ? null : err;
}
