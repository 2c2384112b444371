/**
 * Chat calls into the usage ledger. The chat service hands each provider call to a `ChatMeter`, which
 * returns the same answer and, once it is complete (the whole answer, or a stream's last chunk, or a
 * failure), records one row: tokens from the provider's usage (a stream's final usage chunk, which the
 * providers request upstream), latency, time to the first chunk, the status the caller got. Nothing is
 * awaited on the caller's path but the answer itself; the row goes to the ledger's buffer.
 */
import { performance } from 'node:perf_hooks';
import type { Caller, LazyScope, Scope } from '../../auth/scope';
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

/** Whom a call is recorded for. */
interface Attribution {
  organisationId: string;
  /** The workspace when known before the call (else read from the call's scope). */
  workspaceId: string | null;
  apiKeyId: string | null;
  batch: boolean;
}

export class UsageRecorder {
  constructor(private readonly ledger: UsageLedger) {}

  /** The meter for one caller's calls. */
  chatMeter(caller: Caller): ChatMeter {
    return this.meter({ organisationId: caller.organisationId, workspaceId: caller.workspaceId, apiKeyId: caller.keyId, batch: false });
  }

  /** The meter for the requests of a batch the gateway runs (no key: the gateway makes them). */
  batchMeter(scope: Scope): ChatMeter {
    return this.meter({ ...scope, apiKeyId: null, batch: true });
  }

  private meter(who: Attribution): ChatMeter {
    if (!this.ledger.enabled) return unmetered;
    return async (facts, pending) => {
      const started = performance.now();
      const finish = (outcome: Outcome) => void this.write(who, facts, started, outcome);
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
  private async write(who: Attribution, facts: ChatCallFacts, started: number, outcome: Outcome): Promise<void> {
    const latencyMs = Math.round(performance.now() - started);
    const workspaceId = await facts.scope().then(
      (scope) => scope.workspaceId,
      () => who.workspaceId,
    );
    const usage = outcome.usage;
    const row: UsageRow = {
      time: new Date(),
      organisationId: who.organisationId,
      workspaceId,
      apiKeyId: who.apiKeyId,
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
      batch: who.batch,
      requestId: outcome.requestId,
    };
    this.ledger.record(row);
  }
}

/** The stream's chunks, unchanged; `done` gets the status, the final usage and the time to the first chunk. */
async function* metered(
  chunks: AsyncIterable<ChatChunk>,
  started: number,
  done: (status: number, usage: MeteredUsage | null, ttftMs: number | null) => void,
): AsyncGenerator<ChatChunk> {
  let usage: MeteredUsage | null = null;
  let ttftMs: number | null = null;
  let status = CLIENT_CLOSED;
  try {
    for await (const chunk of chunks) {
      ttftMs ??= Math.round(performance.now() - started);
      if (chunk.type === 'usage') usage = chunk.usage;
      yield chunk;
    }
    status = 200;
  } catch (err) {
    status = statusOf(err);
    throw err;
  } finally {
    done(status, usage, ttftMs);
  }
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
