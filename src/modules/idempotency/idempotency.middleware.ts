import type { Request, RequestHandler, Response } from 'express';
import type { Caller } from '../../auth/scope';
import { GatewayError } from '../../errors';
import { API_KEY_HEADER } from '../../http/rest';
import {
  fingerprintOf,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  type IdempotencyClaim,
  type IdempotencyOwner,
  type IdempotencyService,
  type IdempotentReplay,
} from './idempotency.service';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** The request's Idempotency-Key, if it sent one; an empty or overlong key is a 400. */
export function idempotencyKeyOf(req: Request): string | undefined {
  const key = req.header(IDEMPOTENCY_KEY_HEADER);
  if (key === undefined) return undefined;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new GatewayError('invalid_request', `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`, {
      param: 'Idempotency-Key',
      aboutField: true,
      code: 'invalid_idempotency_key',
    });
  }
  return key;
}

/** Keys belong to the API key's workspace; an organisation key's to its organisation. */
export const ownerOf = (caller: Caller): IdempotencyOwner => ({ organisationId: caller.organisationId, scope: caller.workspaceId ?? '' });

/**
 * What makes two creating requests the same, besides the body: where they go, and (client mode) for
 * which provider with which credentials and settings. Only its hash is stored, never these values.
 */
function requestIdentity(req: Request): string[] {
  const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
  const providerHeaders = Object.keys(req.headers)
    .filter((name) => (name.startsWith('x-gateway-') && name !== API_KEY_HEADER) || name === 'authorization')
    .sort()
    .map((name) => `${name}=${req.header(name) ?? ''}`);
  return [req.method, req.baseUrl + req.path, query, ...providerHeaders];
}

/**
 * Claims `key` for this request, identified by where it goes (requestIdentity) and `identity` (its
 * body, or an upload's file): returns the first answer to replay, or null once this request holds the
 * key (its answer settles it).
 */
export async function claimRequest(
  idempotency: IdempotencyService,
  req: Request,
  res: Response,
  key: string,
  identity: readonly string[],
): Promise<IdempotentReplay | null> {
  const outcome = await claimFor(res, idempotency, key, fingerprintOf([...requestIdentity(req), ...identity]));
  if (outcome.kind === 'replay') return outcome;
  settleWithAnswer(res, outcome, idempotency);
  return null;
}

/** Claims the key for this request; a 409 (the first request still running) says when to retry. */
async function claimFor(res: Response, idempotency: IdempotencyService, key: string, fingerprint: string): Promise<IdempotencyClaim | IdempotentReplay> {
  try {
    return await idempotency.claim(ownerOf(res.locals.caller), key, fingerprint);
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'idempotency_key_in_use') res.setHeader('retry-after', '1');
    throw err;
  }
}

/** Sends the first answer again. */
export function sendReplay(res: Response, replay: IdempotentReplay): void {
  res.setHeader('idempotent-replayed', 'true');
  res.status(replay.status).json(replay.body);
}

/**
 * Settles `claim` with whatever this response answers, before the answer leaves: a success is
 * recorded (so a duplicate arriving just after the client has it is replayed, not refused), a
 * failure releases the key. A response that ends without a JSON answer releases it too.
 */
function settleWithAnswer(res: Response, claim: IdempotencyClaim, idempotency: IdempotencyService): void {
  const send = res.json.bind(res);
  let settled = false;
  res.json = (body: unknown) => {
    settled = true;
    void idempotency.settle(claim, res.statusCode, body).finally(() => send(body));
    return res;
  };
  res.on('close', () => {
    if (!settled) void idempotency.release(claim);
  });
}

/**
 * Declared where a router is mounted, after its JSON body is parsed: the POSTs to `paths` (below the
 * mount point; default its root) create something, and a request with an Idempotency-Key claims it
 * (fingerprinted by route, query, provider and body) or gets the first answer replayed / 409 / 422.
 * Other requests (reads, actions such as cancel) pass. Uploads (`/v1/files`) fingerprint the file
 * itself and claim their key once it has streamed in (FileService.receive).
 */
export function idempotentCreates(idempotency: IdempotencyService, paths: readonly string[] = ['/']): RequestHandler {
  return (req, res, next) => {
    // Reads and updates pass at once: no path parsing, no promise (this runs on every request of its routers).
    if (req.method !== 'POST') return next();
    const path = req.path.replace(/\/$/, '') || '/';
    const key = paths.includes(path) ? idempotencyKeyOf(req) : undefined;
    if (key === undefined) return next();
    return claimRequest(idempotency, req, res, key, [JSON.stringify(req.body ?? null)]).then((replay) => (replay ? sendReplay(res, replay) : next()));
  };
}
