/**
 * What every Vertex AI operation shares: the project, region and bucket (validated settings), the
 * base URLs of Vertex AI and Cloud Storage (server configuration), the credentials, and the one way
 * to call Google with them — a bearer token on every request, scrubbed from any error, and renewed
 * once when Google refuses a cached token before its time (revoked, or expired early).
 */
import type { Readable } from 'node:stream';
import { GatewayError } from '../../errors';
import { providerDownload, providerFetch, type HttpPolicy } from '../http';
import type { ProviderContent } from '../types';
import { providerUrl, type Query } from '../url';
import type { GoogleCredentials } from './auth';

export const VERTEX = 'Vertex AI';
export const STORAGE = 'Google Cloud Storage';
type Service = typeof VERTEX | typeof STORAGE;

export interface VertexConnection {
  project: string;
  region: string;
  /** The bucket datasets go to (required by the file operations). */
  bucket: string | undefined;
  /** Vertex AI's versioned root for the region, e.g. `https://us-central1-aiplatform.googleapis.com/v1`. */
  vertexUrl: string;
  /** Cloud Storage's JSON API origin, e.g. `https://storage.googleapis.com`. */
  storageUrl: string;
  credentials: GoogleCredentials;
  http: HttpPolicy;
}

export interface GoogleRequest {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  json?: unknown;
  /** Safe to repeat after a lost answer (GETs always are). */
  idempotent?: boolean;
  signal?: AbortSignal;
}

/** `projects/{project}/locations/{region}`: the parent of the connection's tuning jobs and models. */
export const parentPath = (conn: VertexConnection) => `projects/${conn.project}/locations/${conn.region}`;

/** A Vertex AI URL; `path` is made of validated resource-name segments. */
export const vertexUrl = (conn: VertexConnection, path: string, query: Query = {}) => providerUrl(conn.vertexUrl, `/${path}`, query);

/** A Cloud Storage JSON API URL; `path` holds URL-encoded bucket and object names (urlPath). */
export const storageUrl = (conn: VertexConnection, path: string, query: Query = {}) => providerUrl(conn.storageUrl, `/${path}`, query);

const isUnauthorized = (err: unknown) => err instanceof GatewayError && err.kind === 'provider' && err.status === 401;

/**
 * Runs `send` with the connection's token. A 401 to a cached token gets one more try with a fresh
 * one when the request can be sent again (`replayable`: not a streamed body already consumed).
 */
export async function authorized<T>(conn: VertexConnection, send: (token: string) => Promise<T>, replayable = true): Promise<T> {
  const token = await conn.credentials.token();
  try {
    return await send(token);
  } catch (err) {
    if (!replayable || !isUnauthorized(err) || !conn.credentials.refused(token)) throw err;
    return send(await conn.credentials.token());
  }
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A JSON call to Google; returns the parsed answer (`undefined` when empty). */
export function googleFetch(conn: VertexConnection, service: Service, req: GoogleRequest): Promise<unknown> {
  return authorized(conn, (token) => providerFetch<unknown>({ provider: service, ...req, headers: bearer(token), redact: [token], policy: conn.http }));
}

/**
 * A call whose answer is streamed back (an object's content, a streamed generation), with the token
 * it used: what the stream reports as an error is scrubbed of it (redact.ts).
 */
export function googleDownload(
  conn: VertexConnection,
  service: Service,
  req: Omit<GoogleRequest, 'idempotent'>,
): Promise<{ content: ProviderContent; secrets: readonly string[] }> {
  const download = async (token: string) => ({
    content: await providerDownload({ provider: service, ...req, headers: bearer(token), redact: [token], policy: conn.http }),
    secrets: [token],
  });
  return authorized(conn, download);
}

/** A streamed upload: sent once (a stream cannot be replayed), under the upload time-out. */
export function googleUpload(conn: VertexConnection, url: string, body: Readable, headers: Record<string, string>): Promise<unknown> {
  const send = (token: string) =>
    providerFetch<unknown>({
      provider: STORAGE,
      method: 'POST',
      url,
      body,
      headers: { ...headers, ...bearer(token) },
      upload: true,
      redact: [token],
      policy: conn.http,
    });
  return authorized(conn, send, false);
}
