/**
 * Chat calls into the usage ledger. The chat service hands each provider call to a `ChatMeter`, which
 * returns the same answer and, once it is complete (the whole answer, or a stream's last chunk, or a
 * failure), records one row: tokens from the provider's usage (a stream's final usage chunk, which the
 * providers request upstream), latency, time to the first chunk, the status the caller got. Nothing is
 * awaited on the caller's path but the answer itself; the row goes to the ledger's buffer.
 */
import { performance } from 'node:perf_hooks';
import type { Caller, LazyScope } from '../../auth/scope';
import { GatewayError } from '../../errors';
import type { ChatAnswer, ChatChunk, ChatUsage } from '../../providers/types';
import type { HostedJob } from '../fine-tuning/fine-tuning.model';
import { CLIENT_CLOSED, type UsageRow } from './usage.model';
import type { UsageLedger } from './usage.ledger';

/** What the chat service knows of a call besides its answer. */
export interface ChatCallFacts {
  scope: LazyScope;
  provider: string;
  /** The stored integration's slug (no `@`); null with header credentials. */
  integration: string | null;
  /** The model as the caller named it, and the base model when it is a fine-tuned one. */
  model: string;
  baseModel: string | null;
  mode: 'hosted' | 'client';
  streamed: boolean;
}

/** Passes a provider call's answer through, recording its usage when it is complete. */
export type ChatMeter = (facts: ChatCallFacts, answer: Promise<ChatAnswer>) => Promise<ChatAnswer>;

/** For calls that are not metered (tools, benchmarks of the service alone). */
export const unmetered: ChatMeter = (_facts, answer) => answer;

/** A provider's usage may carry cached input tokens (OpenAI's `prompt_tokens_details.cached_tokens`). */
type MeteredUsage = ChatUsage & { cachedTokens?: number };

const statusOf = (err: unknown) => (err instanceof GatewayError ? err.status : 500);

interface Outcome {
  status: number;
  usage: MeteredUsage | null;
  requestId: string | null;
  ttftMs: number | null;
}

/** Whose call it is: an API key's, or (a batch request sent by the gateway) the key that created the batch, if known. */
type MeteredCaller = Pick<Caller, 'organisationId' | 'workspaceId'> & { keyId: string | null };

export class UsageRecorder {
  constructor(private readonly ledger: UsageLedger) {}

  /** The meter for one caller's calls; `batch`: requests of a batch (the ledger's `batch` group). */
  chatMeter(caller: MeteredCaller, { batch = false } = {}): ChatMeter {
    if (!this.ledger.enabled) return unmetered;
    return async (facts, pending) => {
      const started = performance.now();
      const finish = (outcome: Outcome) => void this.write(caller, facts, started, outcome, batch);
      let answer: ChatAnswer;
      try {
        answer = await pending;
      } catch (err) {
        finish({ status: statusOf(err), usage: null, requestId: null, ttftMs: null });
        throw err;
      }
      if (!answer.stream) {
        finish({ status: 200, usage: answer.completion.usage, requestId: answer.completion.id, ttftMs: null });
        return answer;
      }
      return { ...answer, chunks: metered(answer.chunks, started, (status, usage, ttftMs) => finish({ status, usage, requestId: answer.id, ttftMs })) };
    };
  }

  /** Builds the row once the call is over; the workspace is looked up now if the call did not need it. */
  private async write(caller: MeteredCaller, facts: ChatCallFacts, started: number, outcome: Outcome, batch: boolean): Promise<void> {
    const latencyMs = Math.round(performance.now() - started);
    const workspaceId = await facts.scope().then(
      (scope) => scope.workspaceId,
      () => caller.workspaceId,
    );
    const usage = outcome.usage;
    const row: UsageRow = {
      time: new Date(),
      organisationId: caller.organisationId,
      workspaceId,
      apiKeyId: caller.keyId,
      operation: 'chat',
      provider: facts.provider,
      integration: facts.integration,
      model: facts.model,
      baseModel: facts.baseModel,
      inputTokens: usage?.promptTokens ?? 0,
      cachedTokens: usage?.cachedTokens ?? 0,
      outputTokens: usage?.completionTokens ?? 0,
      latencyMs,
      ttftMs: outcome.ttftMs,
      status: outcome.status,
      mode: facts.mode,
      streamed: facts.streamed,
      batch,
      requestId: outcome.requestId,
    };
    this.ledger.record(row);
  }
}

/**
 * The stream's chunks, unchanged; `done` gets the status, the final usage and the time to the first
 * chunk. Each chunk is observed as the consumer's own read settles (one `then` per chunk) rather than
 * re-yielded by an async generator, whose every chunk costs a few more promise jobs (issue 26: the
 * ledger's cost per streamed call). A consumer that stops early (`return`) is a caller gone away.
 */
function metered(
  chunks: AsyncIterable<ChatChunk>,
  started: number,
  done: (status: number, usage: MeteredUsage | null, ttftMs: number | null) => void,
): AsyncIterable<ChatChunk> {
  return {
    [Symbol.asyncIterator]: () => {
      const reads = chunks[Symbol.asyncIterator]();
      let usage: MeteredUsage | null = null;
      let ttftMs: number | null = null;
      let open = true;
      const finish = (status: number) => {
        if (open) done(status, usage, ttftMs);
        open = false;
      };
      const seen = (read: IteratorResult<ChatChunk>) => {
        if (read.done) finish(200);
        else {
          ttftMs ??= Math.round(performance.now() - started);
          if (read.value.type === 'usage') usage = read.value.usage;
        }
        return read;
      };
      const failed = (err: unknown): never => {
        finish(statusOf(err));
        throw err;
      };
      return {
        next: () => reads.next().then(seen, failed),
        return: async (): Promise<IteratorResult<ChatChunk>> => {
          finish(CLIENT_CLOSED);
          await reads.return?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/**
 * The facts of a chat call from what the chat service routed it by: a hosted job (its integration and
 * base model), or the provider the request named (`named`: a provider id, or `@slug` of an integration).
 */
export function chatCallFacts(call: {
  scope: LazyScope;
  provider: string;
  named: string | undefined;
  model: string;
  streamed: boolean;
  job: Pick<HostedJob, 'integrationSlug' | 'model'> | undefined;
}): ChatCallFacts {
  const { scope, provider, model, streamed, job } = call;
  if (job) return { scope, provider, model, streamed, integration: job.integrationSlug, baseModel: job.model, mode: 'hosted' };
  const integration = call.named?.startsWith('@') ? call.named.slice(1) : null;
  return { scope, provider, model, streamed, integration, baseModel: null, mode: 'client' };
}
