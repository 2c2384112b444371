import type { BatchResultLine } from '../../providers/batch';
import type { UsageRow } from './usage.model';

/** What every call of one provider-run batch shares in the ledger: whose it is, where it went, which model. */
export type BatchCallFacts = Pick<UsageRow, 'organisationId' | 'workspaceId' | 'apiKeyId' | 'provider' | 'integration' | 'model' | 'baseModel' | 'mode'>;

/** The ledger's integer columns (Postgres `integer`). */
const INT_MAX = 2 ** 31 - 1;

/** A token count from a provider's body: a non-negative integer, else 0. */
const tokens = (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? Math.min(INT_MAX, value) : 0);

interface OpenAIUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
}

/**
 * The ledger rows of a provider batch's result lines, one per line the provider answered (each was a
 * model call, as each request of a batch the gateway runs is one row), `batch: true`: the status it
 * answered and the tokens of its body's `usage` (OpenAI's output line shape, which every provider's
 * output is read into). A line without a response (never run: expired, cancelled) is no call and no
 * row. The time is when the output is read; latency is unknown per line.
 */
export function batchResultUsage(facts: BatchCallFacts, results: readonly BatchResultLine[], time = new Date()): UsageRow[] {
  return results.flatMap(({ response }) => {
    if (!response) return [];
    const body = (typeof response.body === 'object' && response.body !== null ? response.body : {}) as { id?: unknown; usage?: OpenAIUsage | null };
    const usage = body.usage ?? {};
    return [
      {
        ...facts,
        time,
        operation: 'chat' as const,
        inputTokens: tokens(usage.prompt_tokens),
        cachedTokens: tokens(usage.prompt_tokens_details?.cached_tokens),
        outputTokens: tokens(usage.completion_tokens),
        latencyMs: null,
        ttftMs: null,
        status: response.status_code,
        streamed: false,
        batch: true,
        requestId: typeof body.id === 'string' ? body.id : response.request_id || null,
      },
    ];
  });
}
