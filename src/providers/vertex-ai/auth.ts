/**
 * Google service-account auth: the key file (its JSON, raw or base64) read and checked, the
 * JWT-bearer grant (RFC 7523) signed here with node:crypto — google-auth-library cannot send it to a
 * token endpoint other than Google's — and the access tokens it yields, cached per service account
 * (see token-cache.ts). The key file's own `token_uri` is never used: endpoints come from server
 * configuration only, so a caller's key file cannot steer the gateway to another host.
 */
import { createHash, createPrivateKey, createSign, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { GatewayError, providerCode } from '../../errors';
import { providerFetch, type HttpPolicy } from '../http';
import { TokenCache, type AccessToken } from './token-cache';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Google refuses assertions that live longer than an hour. */
const ASSERTION_LIFETIME_S = 3600;
/** The lifetime Google gives its access tokens, assumed when an answer leaves `expires_in` out. */
const DEFAULT_TOKEN_LIFETIME_S = 3600;
/** Service accounts whose tokens are kept; the least recently used one is dropped beyond it. */
const CACHED_ACCOUNTS = 256;

export interface ServiceAccount {
  clientEmail: string;
  privateKey: KeyObject;
  privateKeyId: string | undefined;
  /** Identifies the key without holding it: a hash of the account and its private key. */
  fingerprint: string;
}

/** Why a key file was refused, in words that never quote it. */
class KeyFileError extends Error {}

const keyFileSchema = z.object({
  type: z.literal('service_account', { errorMap: () => ({ message: 'type must be "service_account"' }) }),
  client_email: z.string({ message: 'client_email is missing' }).email('client_email must be an e-mail address'),
  private_key: z.string({ message: 'private_key is missing' }).min(1, 'private_key is missing'),
  private_key_id: z.string().optional(),
});

/** The key file's JSON: as given, or base64 (standard or URL-safe) of it. */
function keyFileJson(value: string): unknown {
  const text = value.trimStart().startsWith('{') ? value : Buffer.from(value, 'base64').toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new KeyFileError('is neither a JSON service-account key file nor base64 of one');
  }
}

function privateKeyOf(pem: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch {
    throw new KeyFileError('has a private_key that is not a PEM private key');
  }
}

/** The service account of a key file; throws a KeyFileError saying what is wrong with it. */
function readServiceAccount(value: string): ServiceAccount {
  const parsed = keyFileSchema.safeParse(keyFileJson(value));
  if (!parsed.success) throw new KeyFileError(`is not a service-account key file: ${parsed.error.issues[0]?.message ?? 'unexpected content'}`);
  const { client_email: clientEmail, private_key: pem, private_key_id: privateKeyId } = parsed.data;
  const privateKey = privateKeyOf(pem);
  if (privateKey.asymmetricKeyType !== 'rsa') throw new KeyFileError('has a private_key that is not an RSA key (RS256 signs with RSA)');
  const fingerprint = createHash('sha256').update(`${clientEmail}\n${pem}`).digest('hex');
  return { clientEmail, privateKey, privateKeyId, fingerprint };
}

/** The settings' `validate` hook: why the key file is refused, or null. */
export function serviceAccountProblem(value: string): string | null {
  try {
    readServiceAccount(value);
    return null;
  } catch (err) {
    if (err instanceof KeyFileError) return err.message;
    throw err;
  }
}

/** The service account of a key file that passed {@link serviceAccountProblem}. */
export function serviceAccount(value: string, header: string): ServiceAccount {
  try {
    return readServiceAccount(value);
  } catch (err) {
    if (!(err instanceof KeyFileError)) throw err;
    throw new GatewayError('invalid_request', err.message, { param: header, aboutField: true, code: 'invalid_setting' });
  }
}

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The signed JWT-bearer assertion: RS256, for the cloud-platform scope, addressed to the token endpoint it is sent to. */
export function signAssertion(account: ServiceAccount, tokenUrl: string, now = Date.now()): string {
  const iat = Math.floor(now / 1000);
  const header = { alg: 'RS256', typ: 'JWT', ...(account.privateKeyId ? { kid: account.privateKeyId } : {}) };
  const claims = { iss: account.clientEmail, scope: CLOUD_PLATFORM_SCOPE, aud: tokenUrl, iat, exp: iat + ASSERTION_LIFETIME_S };
  const signingInput = `${base64url(header)}.${base64url(claims)}`;
  const signature = createSign('RSA-SHA256').update(signingInput).sign(account.privateKey);
  return `${signingInput}.${signature.toString('base64url')}`;
}

const tokenAnswerSchema = z.object({
  access_token: z.string().min(1),
  expires_in: z.number().positive().optional(),
});

/** One exchange of a fresh assertion for an access token at `tokenUrl`. */
async function exchange(account: ServiceAccount, tokenUrl: string, http: HttpPolicy): Promise<AccessToken> {
  const form = new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion: signAssertion(account, tokenUrl) });
  let answer: unknown;
  try {
    answer = await providerFetch<unknown>({
      provider: 'Google OAuth',
      method: 'POST',
      url: tokenUrl,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
      // Exchanging one assertion twice is harmless: a lost answer may be asked again.
      idempotent: true,
      policy: http,
    });
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    const message = `${err.message} (exchanging the key of ${account.clientEmail} for an access token)`;
    throw new GatewayError('provider', message, { status: err.status, code: err.code === null ? 'token_exchange_failed' : providerCode(err.code) });
  }
  const parsed = tokenAnswerSchema.safeParse(answer);
  if (!parsed.success) throw new GatewayError('provider', 'Google OAuth answered the token exchange without an access token', { status: 502 });
  return { value: parsed.data.access_token, lifetimeSeconds: parsed.data.expires_in ?? DEFAULT_TOKEN_LIFETIME_S };
}

/** Tokens of every service account the gateway has used, shared by all calls (and concurrent ones) of this process. */
const tokens = new TokenCache(CACHED_ACCOUNTS);

/** How a connection authenticates: the token to send now, and what to do when Google refuses it. */
export interface GoogleCredentials {
  token(): Promise<string>;
  /** Google answered 401 to `token`: forget it; true when a fresh one is worth a second try. */
  refused(token: string): boolean;
}

/** Credentials from a service-account key: exchanged once per account and token URL, until shortly before expiry. */
export function serviceAccountCredentials(account: ServiceAccount, tokenUrl: string, http: HttpPolicy): GoogleCredentials {
  const key = createHash('sha256').update(`${account.fingerprint}\n${tokenUrl}`).digest('hex');
  return {
    token: async () => (await tokens.get(key, () => exchange(account, tokenUrl, http))).value,
    refused: (token) => {
      tokens.forget(key, token);
      return true;
    },
  };
}

/** Credentials from an access token the caller brings: sent as it is, never exchanged. */
export function bearerCredentials(accessToken: string): GoogleCredentials {
  return { token: () => Promise.resolve(accessToken), refused: () => false };
}
