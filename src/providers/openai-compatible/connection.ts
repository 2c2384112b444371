/**
 * What every operation of an OpenAI-compatible API shares (OpenAI itself, Azure OpenAI): the base
 * URL, the auth headers and fixed query (Azure's `api-version`), and the hand-off to providerFetch.
 * Each provider's module builds this connection from its settings; the operations never see which
 * provider they talk to.
 */
import type { ApiEndpoint } from '../api';
import type { PageInput } from '../types';
import { urlPath } from '../url';

export interface OpenAICompatibleConnection extends ApiEndpoint {
  /** The API root, e.g. `https://api.openai.com/v1` or `https://<resource>.openai.azure.com/openai`. */
  baseUrl: string;
  /** Query parameters every call carries (Azure's `api-version`). */
  query: Readonly<Record<string, string>>;
  /** Azure's 2024-10-21 API has no `method` on create: hyperparameters go top-level. */
  methodOnCreate: boolean;
  /** Whether create takes `metadata` (the gateway job id travels there, see findJob). */
  metadataOnCreate: boolean;
  /** Whose jobs these are when an answer does not say (Azure's jobs carry no organisation: the resource's name). */
  account?: string;
}

/** OpenAI's list endpoints all take the same cursor parameters. */
export const pageQuery = (page: PageInput) => ({ after: page.after, limit: page.limit });

/** Ids go into paths as one segment each (url.ts keeps a hostile id from reaching another route). */
export const jobPath = (id: string, suffix = '') => urlPath`/fine_tuning/jobs/${id}` + suffix;
export const filePath = (id: string, suffix = '') => urlPath`/files/${id}` + suffix;
