/**
 * What every Together AI operation shares: the API root (`GATEWAY_TOGETHER_BASE_URL`), the Bearer
 * key, and the hand-off to providerFetch / providerDownload.
 */
import type { ApiEndpoint } from '../api';
import { urlPath } from '../url';

export const TITLE = 'Together AI';

export interface TogetherConnection extends ApiEndpoint {
  /** The API root, e.g. `https://api.together.xyz/v1`. */
  baseUrl: string;
}

/** Ids go into paths as one segment each (url.ts keeps a hostile id from reaching another route). */
export const jobPath = (id: string, suffix = '') => urlPath`/fine-tunes/${id}` + suffix;
export const filePath = (id: string, suffix = '') => urlPath`/files/${id}` + suffix;
