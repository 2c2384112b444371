/**
 * Google service-account OAuth for the fakes: service-account key files (a fresh RSA key pair each), the
 * JWT-bearer assertion a client signs with one (RFC 7523, built as google-auth-library's gtoken builds it),
 * and a token authority that exchanges assertions for short-lived access tokens with the checks and error
 * bodies of `oauth2.googleapis.com/token`, then tells the other fake APIs whether a bearer token is good.
 */
import { createPublicKey, createSign, generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { FakeHttpError, randomDigits, unixNow, type FakeReply } from './kit';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** The audiences Google's token endpoint accepts: today's URL, and the older one gtoken 7 (google-auth-library 9) signs for. */
export const GOOGLE_TOKEN_AUDIENCES = ['https://oauth2.googleapis.com/token', 'https://www.googleapis.com/oauth2/v4/token'];
/** Google refuses assertions meant to live longer than an hour. */
const MAX_ASSERTION_LIFETIME_S = 3600;
/** Tolerated clock difference between the client that signed an assertion and the server. */
const CLOCK_SKEW_S = 60;

/** A service-account key file as the Cloud console downloads it. */
export interface ServiceAccountKey {
  type: 'service_account';
  project_id: string;
  private_key_id: string;
  /** PKCS#8 PEM, like Google's. */
  private_key: string;
  client_email: string;
  client_id: string;
  auth_uri: string;
  token_uri: string;
  auth_provider_x509_cert_url: string;
  client_x509_cert_url: string;
  universe_domain: string;
}

/** A new service account of `projectId` with its own key pair; `token_uri` names the fake token endpoint. */
export function createServiceAccount(projectId: string, tokenUri: string, accountName = 'gateway-tests'): ServiceAccountKey {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const clientEmail = `${accountName}@${projectId}.iam.gserviceaccount.com`;
  return {
    type: 'service_account',
    project_id: projectId,
    private_key_id: randomBytes(20).toString('hex'),
    private_key: privateKey,
    client_email: clientEmail,
    client_id: randomDigits(21),
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: tokenUri,
    auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
    client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(clientEmail)}`,
    universe_domain: 'googleapis.com',
  };
}

const base64url = (text: string) => Buffer.from(text).toString('base64url');

/**
 * A JWT-bearer assertion signed with the account's key the way gtoken signs one (header `{"alg":"RS256"}`,
 * claims `iss, scope, aud, exp = iat + 3600, iat`). Claims and header can be overridden (a claim set to
 * `undefined` is left out) so tests can build every kind of bad assertion.
 */
export function signAssertion(
  account: Pick<ServiceAccountKey, 'client_email' | 'private_key'>,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = { alg: 'RS256' },
): string {
  const iat = unixNow();
  const payload = { iss: account.client_email, scope: CLOUD_PLATFORM_SCOPE, aud: GOOGLE_TOKEN_AUDIENCES[0], exp: iat + 3600, iat, ...claims };
  const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`;
  const signature = createSign('RSA-SHA256').update(signingInput).sign(account.private_key);
  return `${signingInput}.${signature.toString('base64url')}`;
}

/** The token endpoint's error body `{error, error_description}`. */
export class OAuthError extends FakeHttpError {
  constructor(status: number, error: string, description: string) {
    super(status, description, { error });
  }
}

const invalidGrant = (description: string) => new OAuthError(400, 'invalid_grant', description);

export function renderOAuthError(e: FakeHttpError): FakeReply {
  const fallback = e.status === 429 ? 'rate_limit_exceeded' : e.status >= 500 ? 'internal_failure' : 'invalid_request';
  return { status: e.status, body: { error: e.details.error ?? fallback, error_description: e.message } };
}

export interface IssuedToken {
  accessToken: string;
  clientEmail: string;
  scope: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/** One `POST /token` as the fake understood it; `error` is the description it answered with, if it refused. */
export interface TokenRequestRecord {
  grantType: string | null;
  header?: Record<string, unknown>;
  claims?: Record<string, unknown>;
  error?: string;
}

/** Why a request's bearer token was refused (the APIs word each case their own way). */
export type BearerProblem = 'missing' | 'invalid' | 'expired';

interface DecodedJwt {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  signingInput: string;
  signature: Buffer;
}

const NOT_A_JWT = 'Invalid JWT: the assertion is not a signed JWT.';

/** The three base64url parts of a compact JWS: header and claims as objects, the signed input and the signature. */
function decodeJwt(assertion: string): DecodedJwt {
  const parts = assertion.split('.');
  if (parts.length !== 3 || parts.some((part) => !/^[A-Za-z0-9_-]+$/.test(part))) throw invalidGrant(NOT_A_JWT);
  const json = (part: string) => {
    try {
      const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
      if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // reported below
    }
    throw invalidGrant(NOT_A_JWT);
  };
  const [header, claims, signature] = parts;
  return { header: json(header), claims: json(claims), signingInput: `${header}.${claims}`, signature: Buffer.from(signature, 'base64url') };
}

/**
 * Issues access tokens for registered service accounts and checks them afterwards. State is public so
 * tests can assert what happened (how many exchanges, which assertions were refused and why).
 */
export class TokenAuthority {
  readonly accounts = new Map<string, ServiceAccountKey>();
  readonly tokens = new Map<string, IssuedToken>();
  /** Successful assertion exchanges. */
  exchanges = 0;
  readonly requests: TokenRequestRecord[] = [];

  constructor(
    /** This endpoint's own URL, a valid `aud` besides Google's. */
    private readonly tokenUrl: string,
    /** `expires_in` of new tokens; tests shorten it to exercise refresh. */
    public lifetimeSeconds: number,
  ) {}

  register(account: ServiceAccountKey): void {
    this.accounts.set(account.client_email, account);
  }

  /** Answers a `POST /token` form: an access token, or the OAuthError Google would answer with. */
  exchange(form: URLSearchParams): { access_token: string; expires_in: number; token_type: 'Bearer' } {
    const record: TokenRequestRecord = { grantType: form.get('grant_type') };
    this.requests.push(record);
    try {
      const account = this.verifyAssertion(form, record);
      this.exchanges++;
      const token = this.issue(account.client_email, String(record.claims!.scope));
      return { access_token: token.accessToken, expires_in: this.lifetimeSeconds, token_type: 'Bearer' };
    } catch (e) {
      record.error = (e as Error).message;
      throw e;
    }
  }

  /** A token as if exchanged, without an assertion (a client that brings its own access token). */
  issue(clientEmail: string, scope = CLOUD_PLATFORM_SCOPE): IssuedToken {
    const token = {
      accessToken: `ya29.${randomBytes(48).toString('base64url')}`,
      clientEmail,
      scope,
      expiresAt: Date.now() + this.lifetimeSeconds * 1000,
    };
    this.tokens.set(token.accessToken, token);
    return token;
  }

  /** The token an `Authorization` header carries, or why it is not acceptable. */
  check(authorization: string | undefined): IssuedToken | BearerProblem {
    if (!authorization) return 'missing';
    const match = /^Bearer (\S+)$/i.exec(authorization);
    const token = match ? this.tokens.get(match[1]) : undefined;
    if (!token) return 'invalid';
    return token.expiresAt <= Date.now() ? 'expired' : token;
  }

  /** Every token issued so far stops working, as after an hour. */
  expireAll(): void {
    for (const token of this.tokens.values()) token.expiresAt = 0;
  }

  private verifyAssertion(form: URLSearchParams, record: TokenRequestRecord): ServiceAccountKey {
    if (record.grantType !== JWT_BEARER_GRANT) {
      throw new OAuthError(400, 'unsupported_grant_type', `Invalid grant_type: ${record.grantType ?? ''}`);
    }
    const assertion = form.get('assertion');
    if (!assertion) throw new OAuthError(400, 'invalid_request', 'Missing required parameter: assertion');
    const { header, claims, signingInput, signature } = decodeJwt(assertion);
    Object.assign(record, { header, claims });
    if (header.alg !== 'RS256') throw invalidGrant(`Invalid JWT: unsupported signing algorithm ${String(header.alg)}; RS256 is required.`);
    const account = typeof claims.iss === 'string' ? this.accounts.get(claims.iss) : undefined;
    if (!account) throw invalidGrant('Invalid grant: account not found');
    const keyMatches = header.kid === undefined || header.kid === account.private_key_id;
    if (!keyMatches || !verify('RSA-SHA256', Buffer.from(signingInput), createPublicKey(account.private_key), signature)) {
      throw invalidGrant('Invalid JWT Signature.');
    }
    if (typeof claims.aud !== 'string' || ![...GOOGLE_TOKEN_AUDIENCES, this.tokenUrl].includes(claims.aud)) {
      throw invalidGrant(`Invalid JWT: Failed audience check. The right audience is ${GOOGLE_TOKEN_AUDIENCES[0]}`);
    }
    if (!this.timesAreSane(claims.iat, claims.exp)) {
      throw invalidGrant(
        'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.',
      );
    }
    if (claims.sub !== undefined && claims.sub !== account.client_email) {
      // Impersonating a user needs domain-wide delegation, which a test account never has.
      const description = 'Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested.';
      throw new OAuthError(401, 'unauthorized_client', description);
    }
    if (typeof claims.scope !== 'string' || !claims.scope.split(' ').includes(CLOUD_PLATFORM_SCOPE)) {
      throw new OAuthError(400, 'invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
    }
    return account;
  }

  private timesAreSane(iat: unknown, exp: unknown): boolean {
    const now = unixNow();
    if (typeof iat !== 'number' || typeof exp !== 'number') return false;
    return iat <= now + CLOCK_SKEW_S && exp > now - CLOCK_SKEW_S && exp > iat && exp - iat <= MAX_ASSERTION_LIFETIME_S;
  }
}
