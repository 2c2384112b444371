/** One row of the usage ledger as the services see it (src/modules/usage/usage.ledger.ts writes them). */
export interface UsageRow {
  time: Date;
  organisationId: string;
  workspaceId: string | null;
  apiKeyId: string | null;
  operation: 'chat' | 'fine_tuning';
  provider: string;
  integration: string | null;
  model: string;
  baseModel: string | null;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  latencyMs: number | null;
  ttftMs: number | null;
  /** The HTTP status the caller got; 499 when the caller went away first. */
  status: number;
  mode: 'hosted' | 'client';
  streamed: boolean;
  batch: boolean;
  requestId: string | null;
}

/** The status recorded for a call the caller abandoned (nginx's convention: no answer was sent). */
export const CLIENT_CLOSED = 499;
