/**
 * The account's models (`GET /v1/accounts/{account}/models`, Fireworks' control plane): what it has
 * tuned or uploaded, by full resource name (chat takes that name). Fireworks' own base models are
 * public and many; they are not listed per integration.
 */
import { z } from 'zod';
import type { ProviderModel } from '../types';
import { controlRequest, type FireworksConnection } from './connection';
import { unixSeconds } from './mappers';

/** One page: the list is what `GET /v1/models` adds per integration, not a catalogue. */
const PAGE_SIZE = 200;

const wireModels = z.object({ models: z.array(z.object({ name: z.string().min(1), createTime: z.string().nullish() })).nullish() });

export async function listModels(conn: FireworksConnection): Promise<ProviderModel[]> {
  const answer = wireModels.safeParse(await controlRequest<unknown>(conn, { method: 'GET', path: '/models', query: { pageSize: PAGE_SIZE } }));
  if (!answer.success) return [];
  return (answer.data.models ?? []).map((m) => ({ id: m.name, created: unixSeconds(m.createTime), ownedBy: conn.account }));
}
