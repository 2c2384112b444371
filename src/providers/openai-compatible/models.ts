/**
 * `GET /models` of an OpenAI-compatible API (OpenAI, Azure OpenAI, Together AI): the models the
 * credentials may call. OpenAI answers `{data: [{id, created, owned_by}]}`; Azure says `created_at`
 * and no owner (the resource owns what it lists); Together answers a bare array with `organization`.
 */
import { z } from 'zod';
import { apiRequest, type ApiEndpoint } from '../api';
import type { ProviderModel } from '../types';

const wireModel = z.object({
  id: z.string().min(1),
  created: z.number().nullish(),
  created_at: z.number().nullish(),
  owned_by: z.string().nullish(),
  organization: z.string().nullish(),
  /** Together's kind of model: only chat-capable ones are listed. */
  type: z.string().nullish(),
  /** Azure's: a model without chat completions is left out. */
  capabilities: z.object({ chat_completion: z.boolean().nullish() }).nullish(),
});
const wireList = z.union([z.object({ data: z.array(z.unknown()) }), z.array(z.unknown())]);

/** Together's model kinds that answer chat completions. */
const CHAT_TYPES = new Set(['chat', 'language', 'code']);

const chatCapable = (model: z.infer<typeof wireModel>) => (!model.type || CHAT_TYPES.has(model.type)) && model.capabilities?.chat_completion !== false;

/** The listed models, each read on its own: one odd entry is left out rather than failing the list. */
export async function listModels(conn: ApiEndpoint & { account?: string }, fallbackOwner: string): Promise<ProviderModel[]> {
  const answer = wireList.safeParse(await apiRequest<unknown>(conn, { method: 'GET', path: '/models' }));
  if (!answer.success) return [];
  const entries = Array.isArray(answer.data) ? answer.data : answer.data.data;
  return entries.flatMap((entry) => {
    const model = wireModel.safeParse(entry);
    if (!model.success || !chatCapable(model.data)) return [];
    const { id, created, created_at, owned_by, organization } = model.data;
    return [{ id, created: Math.floor(created ?? created_at ?? 0), ownedBy: owned_by || organization || conn.account || fallbackOwner }];
  });
}
