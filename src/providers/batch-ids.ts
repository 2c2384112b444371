/**
 * The ids client-mode batches answer (issue 25): nothing is stored, so an id carries the provider's
 * handle itself (a batch id, a job ARN, a resource name), wrapped so that callers never see a storage
 * URI and so that an id is stable (the same handle always gives the same id). Opaque is not secret:
 * the wrapping is base64url, and no id holds a credential. What comes back in is never trusted: the
 * wrapping must be exact, the provider the request names must be the id's, and the module's
 * `client.ownsHandle` must accept the handle for the request's settings (registry.ts) — all before
 * any connection.
 *
 *   batch_cb1<b64url("provider\nhandle")>       a batch
 *   file-cbo1<b64url("provider\nbatch handle")> a batch's output file (its successes)
 *   file-cbe1<b64url("provider\nbatch handle")> a batch's error file (its failures)
 *   file-cbi1<b64url("provider\nhandle")>       an input file, for providers whose upload answers a storage handle
 */
import { badRequest } from '../errors';
import type { ProviderName } from './names';

export type BatchIdKind = 'batch' | 'output' | 'error' | 'input';

const PREFIXES: Readonly<Record<BatchIdKind, string>> = { batch: 'batch_cb1', output: 'file-cbo1', error: 'file-cbe1', input: 'file-cbi1' };
/** Long enough for a Vertex resource name or a Bedrock ARN, short enough for any URL. */
const MAX_ID_LENGTH = 1024;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** Handles are printable and single-line (a newline separates the provider). */
const HANDLE = /^[\x21-\x7e]{1,700}$/;

/** The id of `handle` at `provider`. */
export function batchId(kind: BatchIdKind, provider: ProviderName, handle: string): string {
  return PREFIXES[kind] + Buffer.from(`${provider}\n${handle}`, 'utf8').toString('base64url');
}

/** The kind of an id of ours, judged by its prefix alone; null for anything else (a provider's own id). */
export function batchIdKind(id: string): BatchIdKind | null {
  const kind = (Object.keys(PREFIXES) as BatchIdKind[]).find((k) => id.startsWith(PREFIXES[k]));
  return kind ?? null;
}

/**
 * The provider and handle `id` wraps, when it is exactly an id of `kinds` (400 `invalid_id` naming
 * `param` otherwise). The handle still has to be checked against the settings (`ownsHandle`).
 */
export function openBatchId(id: string, kinds: readonly BatchIdKind[], param: string): { kind: BatchIdKind; provider: string; handle: string } {
  const kind = batchIdKind(id);
  const refuse = (why: string) =>
    badRequest(`'${id.slice(0, 80)}' is not a ${kinds.includes('batch') ? 'batch' : 'file'} id of client mode: ${why}`, param, 'invalid_id');
  if (kind === null || !kinds.includes(kind)) throw refuse('unknown form');
  const body = id.slice(PREFIXES[kind].length);
  if (id.length > MAX_ID_LENGTH || !BASE64URL.test(body)) throw refuse('malformed');
  const text = Buffer.from(body, 'base64url').toString('utf8');
  // Only the canonical spelling is ours: anything else was made by hand.
  if (Buffer.from(text, 'utf8').toString('base64url') !== body) throw refuse('malformed');
  const newline = text.indexOf('\n');
  const provider = text.slice(0, newline);
  const handle = text.slice(newline + 1);
  if (newline <= 0 || !HANDLE.test(handle)) throw refuse('malformed');
  return { kind, provider, handle };
}
