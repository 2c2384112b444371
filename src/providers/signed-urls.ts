/**
 * Signed URLs a provider hands out (Fireworks' dataset downloads and large uploads) are fetched only
 * where the provider keeps its storage: its own storage hosts, the origin of its configured base URL
 * (the operator's choice: a proxy, a test server), and hosts the operator adds by a setting. Any
 * other URL an answer names (loopback, link-local, private addresses, anything) is refused before a
 * connection is made, so a provider's answer cannot point the gateway at the network behind it.
 */
import { GatewayError } from '../errors';

/** Where a provider's signed URLs may point, beside its base URLs' origins. */
export interface SignedUrlHosts {
  /** The configuration variable that adds hosts, e.g. `GATEWAY_FIREWORKS_DOWNLOAD_HOSTS`. */
  env: string;
  /** The provider's own storage hosts (HTTPS): `storage.googleapis.com`, `*.storage.googleapis.com`. */
  default: readonly string[];
}

/** An entry: `host`, `host:port` or `*.domain` (HTTPS only), or an origin `http(s)://host[:port]`. */
const NAME = '[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?';
const HOST = new RegExp(`^(?:\\*\\.${NAME}|${NAME}(?::\\d{1,5})?)$`);
const ORIGIN = new RegExp(`^https?://${NAME}(?::\\d{1,5})?/?$`);

const entriesOf = (text: string) =>
  text
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);

/** Why a configured host list is malformed (its first bad entry), or null. */
export function hostListProblem(text: string): string | null {
  const bad = entriesOf(text).find((e) => !HOST.test(e) && !ORIGIN.test(e));
  return bad === undefined ? null : `'${bad}' is not a host, *.domain or http(s)://host[:port] origin`;
}

/** A comma-separated host list as configured (checked at start-up by `hostListProblem`), origins normalised. */
export function parseHostList(text: string): string[] {
  const problem = hostListProblem(text);
  if (problem) throw new Error(problem);
  return entriesOf(text).map((e) => (ORIGIN.test(e) ? new URL(e).origin : e));
}

function allowedBy(entry: string, url: URL): boolean {
  if (entry.includes('://')) return url.origin === entry;
  if (url.protocol !== 'https:') return false;
  if (entry.includes(':')) return url.host === entry;
  const named = entry.startsWith('*.') ? url.hostname.endsWith(entry.slice(1)) : url.hostname === entry;
  return named && url.port === '';
}

/** One provider's rule, as its connection carries it. */
export interface SignedUrlPolicy {
  /** Names the provider in errors. */
  title: string;
  /** The variable that adds hosts, named in errors. */
  env: string;
  /** Its storage hosts and the operator's (see `parseHostList`). */
  hosts: readonly string[];
  /** Its configured base URLs: their origins are allowed too. */
  baseUrls: readonly string[];
}

/**
 * `raw` when it may be fetched: an http(s) URL without credentials, on the origin of one of `baseUrls`
 * or a host of `hosts`; otherwise a 502 naming the host (never the URL: it carries a signature).
 */
export function checkSignedUrl(raw: string, policy: SignedUrlPolicy): string {
  const url = URL.canParse(raw) ? new URL(raw) : null;
  if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password) {
    throw new GatewayError('provider', `${policy.title} gave an unusable signed URL`, { status: 502 });
  }
  const ownOrigin = policy.baseUrls.some((base) => new URL(base).origin === url.origin);
  if (ownOrigin || policy.hosts.some((entry) => allowedBy(entry, url))) return raw;
  const message = `${policy.title} gave a signed URL on ${url.host}, which is not one of its storage hosts (${policy.env} adds hosts)`;
  throw new GatewayError('provider', message, { status: 502, code: 'signed_url_host_refused' });
}
