/**
 * Chat calls into the usage ledger. For each provider call the chat service asks the caller's
 * `ChatMeter` for a `CallObserver`, which the stall guard tells what it sees (the answer, a stream's
 * chunks, the end); once the call is over (the whole answer, a stream's last chunk, a failure, a
 * consumer gone) it records one row: tokens from the provider's usage (a stream's final usage chunk,
 * which the providers request upstream), latency, time to the first chunk, the status the caller got.
 * Nothing is awaited on the caller's path and no stream is wrapped for it; the row goes to the
 * ledger's buffer.
 */
import { performance } from 'node:perf_hooks';
import type { Caller, LazyScope } from '../../auth/scope';
import { GatewayError } from '../../errors';
import type { ChatAnswer, ChatChunk, ChatUsage } from '../../providers/types';
import type { CallEnd, CallObserver } from '../chat/stall-guard';
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

/** The observer that records a provider call's usage; undefined when calls are not metered. */
export type ChatMeter = (facts: ChatCallFacts) => CallObserver | undefined;

/** For calls that are not metered (tools, benchmarks of the service alone). */
export const unmetered: ChatMeter = () => undefined;

/** A provider's usage may carry cached input tokens (OpenAI's `prompt_tokens_details.cached_tokens`). */
type MeteredUsage = ChatUsage & { cachedTokens?: number };

/** Whose call it is: an API key's, or (a batch request sent by the gateway) the key that created the batch, if known. */
type MeteredCaller = Pick<Caller, 'organisationId' | 'workspaceId'> & { keyId: string | null };

export class UsageRecorder {
  constructor(private readonly ledger: UsageLedger) {}

  /** The meter for one caller's calls; `batch`: requests of a batch (the ledger's `batch` group). */
  chatMeter(caller: MeteredCaller, { batch = false } = {}): ChatMeter {
    if (!this.ledger.enabled) return unmetered;
    return (facts) => new MeteredCall(this.ledger, caller, facts, batch);
  }
}

/** One call's observer: keeps what the row needs as the call goes, records the row at its end. */
class MeteredCall implements CallObserver {
  private readonly started = performance.now();
  private usage: MeteredUsage | null = null;
  private requestId: string | null = null;
  private ttftMs: number | null = null;

  constructor(
    private readonly ledger: UsageLedger,
    private readonly caller: MeteredCaller,
    private readonly facts: ChatCallFacts,
    private readonly batch: boolean,
  ) {}

  answered(answer: ChatAnswer): void {
    if (answer.stream) this.requestId = answer.id;
    else {
      this.requestId = answer.completion.id;
      this.usage = answer.completion.usage;
    }
  }

  chunk(chunk: ChatChunk): void {
    this.ttftMs ??= Math.round(performance.now() - this.started);
    if (chunk.type === 'usage') this.usage = chunk.usage;
  }

  ended(end: CallEnd): void {
    const status = 'error' in end ? statusOf(end.error) : 'abandoned' in end ? CLIENT_CLOSED : 200;
    void this.write(status, Math.round(performance.now() - this.started));
  }

  /** Builds the row; the workspace is looked up now if the call did not need it. */
  private async write(status: number, latencyMs: number): Promise<void> {
    const { caller, facts, usage } = this;
    const workspaceId = await facts.scope().then(
      (scope) => scope.workspaceId,
      () => caller.workspaceId,
    );
    this.ledger.record({
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
      ttftMs: this.ttftMs,
      status,
      mode: facts.mode,
      streamed: facts.streamed,
      batch: this.batch,
      requestId: this.requestId,
    } satisfies UsageRow);
  }
}

const statusOf = (err: unknown) => (err instanceof GatewayError ? err.status : 500);

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
