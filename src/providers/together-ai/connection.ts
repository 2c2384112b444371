/**
 * What every Together AI operation shares: the API root (`GATEWAY_TOGETHER_BASE_URL`), the Bearer
 * key, and the hand-off to providerFetch / providerDownload.
 */
import type { ApiEndpoint } from '../api';

export const TITLE = 'Together AI';

export interface TogetherConnection extends ApiEndpoint {
  /** The API root, e.g. `https://api.together.xyz/v1`. */
  baseUrl: string;
}

/** Ids go into paths; encoding keeps a hostile id from reaching another route. */
export const jobPath = (id: string, suffix = '') => `/fine-tunes/${encodeURIComponent(id)}${suffix}`;
export const filePath = (id: string, suffix = '') => `/files/${encodeURIComponent(id)}${suffix}`;

/** Together's `{data: [...]}` lists (none of them paged by the API). */
export interface TogetherList<T> {
  data?: T[] | null;
}
