import path from 'node:path';
import { z } from 'zod';
import { decodeMasterKey, MASTER_KEY_FORMAT_HINT } from './crypto/secret-box';
import type { QueryLimits } from './graphql/limits';
import type { MultipartLimits } from './http/multipart-guard';
import type { FailedAuthOptions } from './modules/rate-limits/failed-auth.limiter';
import type { ExpansionLimits } from './modules/chat/partial-expansion';
import type { HostedCacheOptions } from './modules/chat/hosted.cache';
import type { LedgerOptions } from './modules/usage/usage.ledger';
import type { RateLimitOptions } from './modules/rate-limits/rate-limiter';
import { hostListProblem } from './providers/signed-urls';
import { MAX_PAGE_SIZE } from './validation/parse';
import type { S3ClientSettings } from './storage/s3-file-store';

/** Environment variables, parsed and validated once at start-up. */
const envSchema = z.object({
  NODE_ENV: z.string().default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: z.string().url().optional(),
  DATA_DIR: z.string().default('./.data'),
  GATEWAY_BOOTSTRAP_API_KEY: z.string().min(16).optional(),
  // Never quoted in the message: it is a secret.
  GATEWAY_MASTER_KEY: z
    .string()
    .refine((v) => decodeMasterKey(v) !== null, { message: `must be ${MASTER_KEY_FORMAT_HINT}` })
    .optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  GATEWAY_JOB_POLL_MS: z.coerce.number().int().positive().default(5000),
  GATEWAY_JOB_LEASE_MS: z.coerce.number().int().positive().default(30000),
  GATEWAY_BATCH_POLL_MS: z.coerce.number().int().positive().default(1000),
  GATEWAY_BATCH_CONCURRENCY: z.coerce.number().int().min(0).max(256).default(8),
  // A request of a gateway-run batch answered 5xx is sent again after this, then twice as long each time.
  GATEWAY_BATCH_RETRY_BASE_MS: z.coerce.number().int().positive().default(1000),
  // A hosted job that cannot reach its provider fails this long after its first failed attempt (15 min).
  GATEWAY_JOB_SUBMIT_DEADLINE_MS: z.coerce.number().int().positive().default(900_000),
  GATEWAY_PROVIDER_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  GATEWAY_JSON_LIMIT: z.string().default('1mb'),
  // Deepest nesting of objects and arrays in a JSON body (src/http/json-depth.ts).
  GATEWAY_JSON_MAX_DEPTH: z.coerce.number().int().positive().default(64),
  // Multipart requests (both faces, src/http/multipart-guard.ts): parts, and bytes that are not the file's content.
  GATEWAY_MULTIPART_MAX_PARTS: z.coerce.number().int().positive().default(8),
  GATEWAY_MULTIPART_MAX_NON_FILE_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(2 * 1024 * 1024),
  GATEWAY_UPLOAD_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(512 * 1024 * 1024),
  // GraphQL query limits (src/graphql/limits.ts).
  GATEWAY_GRAPHQL_MAX_DEPTH: z.coerce.number().int().positive().default(10),
  GATEWAY_GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(0).default(15),
  GATEWAY_GRAPHQL_MAX_DIRECTIVES: z.coerce.number().int().min(0).default(10),
  GATEWAY_GRAPHQL_MAX_TOKENS: z.coerce.number().int().positive().default(5000),
  GATEWAY_GRAPHQL_MAX_COST: z.coerce.number().int().positive().default(10_000),
  GATEWAY_GRAPHQL_DEFAULT_LIST_SIZE: z.coerce.number().int().positive().default(50),
  // The secret a federation router sends to read `_service { sdl }` (src/graphql/federation.ts); never quoted.
  GATEWAY_FEDERATION_SECRET: z.string().min(16).optional(),
  // Chat completions (src/modules/chat/partial-expansion.ts): characters once prompt partials are expanded.
  GATEWAY_CHAT_MAX_MESSAGE_CHARS: z.coerce.number().int().positive().default(500_000),
  GATEWAY_CHAT_MAX_PROMPT_CHARS: z.coerce.number().int().positive().default(1_000_000),
  // Rate limits (src/modules/rate-limits): requests per API key per minute; unset = no limit.
  GATEWAY_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().optional(),
  REDIS_URL: z.string().url().optional(),
  // Failed authentications (unknown or revoked keys) per client address and over all clients, per minute.
  GATEWAY_AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().positive().default(30),
  GATEWAY_AUTH_FAILURES_GLOBAL_PER_MINUTE: z.coerce.number().int().positive().default(300),
  // Express's `trust proxy` (hops or addresses): which X-Forwarded-For entry is the client's address.
  GATEWAY_TRUST_PROXY: z.string().optional(),
  GATEWAY_REDIS_KEY_PREFIX: z.string().min(1).default('gateway:rl'),
  // Where uploaded files live: `local` (under DATA_DIR) or `s3://bucket/prefix` (src/storage/s3-file-store.ts).
  GATEWAY_FILE_STORE: z
    .string()
    .regex(/^(local|s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?)$/, { message: 'must be local or s3://bucket/prefix' })
    .default('local'),
  GATEWAY_FILE_STORE_ENDPOINT: z.string().url().optional(),
  // For the S3 file store; unset, the AWS SDK's default chain (profiles, instance roles…) decides.
  AWS_REGION: z.string().min(1).optional(),
  AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  AWS_SESSION_TOKEN: z.string().min(1).optional(),
  // The in-process API key cache (src/modules/api-keys/api-key.cache.ts); 0 turns it off.
  GATEWAY_KEY_CACHE_SIZE: z.coerce.number().int().min(0).default(10_000),
  GATEWAY_KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).default(30_000),
  GATEWAY_HOSTED_CACHE_SIZE: z.coerce.number().int().min(0).default(10_000),
  GATEWAY_PARTIAL_CACHE_CHARS: z.coerce.number().int().min(0).default(8_000_000),
  GATEWAY_HOSTED_CACHE_TTL_MS: z.coerce.number().int().min(0).default(30_000),
  // Browser origins allowed to call both faces: comma-separated, `*` for any; empty (default) for none.
  GATEWAY_CORS_ORIGINS: z.string().default(''),
  // Database outages (Postgres): how long a request waits for a connection and for a query's answer.
  GATEWAY_DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().positive().default(2000),
  GATEWAY_DB_QUERY_TIMEOUT_MS: z.coerce.number().int().positive().default(4000),
  // HTTP server hygiene (node:http): slow clients cannot hold connections.
  GATEWAY_HEADERS_TIMEOUT_MS: z.coerce.number().int().positive().default(20_000),
  GATEWAY_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(0).default(300_000),
  GATEWAY_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().positive().default(5000),
  GATEWAY_SHUTDOWN_GRACE_MS: z.coerce.number().int().positive().default(10_000),
  // The usage ledger (src/modules/usage/usage.ledger.ts): on or off, how often its buffer is written, how many rows
  // make a write happen sooner, and how long rows are kept.
  GATEWAY_USAGE_LEDGER: z.enum(['on', 'off']).default('on'),
  GATEWAY_USAGE_FLUSH_MS: z.coerce.number().int().positive().default(1000),
  GATEWAY_USAGE_BATCH_ROWS: z.coerce.number().int().positive().default(1000),
  GATEWAY_USAGE_RETENTION_DAYS: z.coerce.number().int().positive().default(90),
  // Prices per model for /v1/organization/costs (src/modules/usage/prices.ts); unset: every cost is unknown.
  GATEWAY_PRICES_FILE: z.string().min(1).optional(),
});

/** Every variable the gateway reads (documented in the README's configuration table). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(envSchema.shape);

export interface Config {
  production: boolean;
  port: number;
  host: string;
  /** A Postgres URL, or undefined for the embedded PGlite database. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** Where PGlite keeps its files; `memory://` keeps them in memory (tests). */
  pgliteDir: string;
  /** Where the local file store keeps uploaded files (and their temporary files). */
  filesDir: string;
  bootstrapApiKey: string | undefined;
  masterKey: string | undefined;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  jobPollMs: number;
  jobLeaseMs: number;
  /** The batch runner: how often it looks for due batches, and requests in flight per integration and model (0: this process runs no batches). */
  batch: { pollMs: number; concurrency: number; retryBaseMs: number };
  /** How long a hosted job not yet submitted is retried after its first failure before it fails as `provider_unreachable`. */
  jobSubmitDeadlineMs: number;
  /**
   * Provider endpoint overrides (`GATEWAY_OPENAI_BASE_URL`, `GATEWAY_AZURE_OPENAI_BASE_URL`, …): every
   * `GATEWAY_*_URL` variable, checked to be an http(s) URL, and every `GATEWAY_*_DOWNLOAD_HOSTS` host
   * list (hosts a provider's signed URLs may point to). Each provider module names the ones it reads.
   */
  providerEndpoints: Record<string, string>;
  /** A provider call (or the wait for its first byte) taking longer answers 504. */
  providerTimeoutMs: number;
  jsonLimit: string;
  jsonMaxDepth: number;
  uploadLimitBytes: number;
  multipart: MultipartLimits;
  graphqlLimits: QueryLimits;
  /** What a router sends in x-gateway-federation-secret to read `_service { sdl }`; unset: open outside production only. */
  federationSecret: string | undefined;
  /** A chat request's size with its prompt partials expanded (413 beyond). */
  chatLimits: ExpansionLimits;
  /** Null for the local store under `filesDir`. */
  s3FileStore: (S3ClientSettings & { location: string }) | null;
  /** Null when GATEWAY_RATE_LIMIT_PER_MINUTE is unset. */
  rateLimit: RateLimitOptions | null;
  failedAuth: FailedAuthOptions;
  /** Express's `trust proxy` setting, parsed; false: the client is the socket's peer. */
  trustProxy: boolean | number | string;
  keyCache: { maxEntries: number; ttlMs: number };
  hostedCache: HostedCacheOptions;
  /** Origins browsers may call from (`*`: any); empty: no cross-origin access. */
  corsOrigins: string[];
  database: { connectTimeoutMs: number; queryTimeoutMs: number };
  /** node:http timeouts; `requestTimeout` 0 = none (the whole request, uploads included). */
  server: { headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number };
  /** On SIGTERM, how long in-flight requests and job steps may take before connections close and leases are handed back. */
  shutdownGraceMs: number;
  usage: LedgerOptions;
  /** The JSON price table for costs; read (and checked) at start. */
  pricesFile: string | undefined;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  if (e.GATEWAY_REQUEST_TIMEOUT_MS > 0 && e.GATEWAY_HEADERS_TIMEOUT_MS > e.GATEWAY_REQUEST_TIMEOUT_MS) {
    throw new Error('Invalid configuration: GATEWAY_HEADERS_TIMEOUT_MS: must not exceed GATEWAY_REQUEST_TIMEOUT_MS');
  }
  const dataDir = path.resolve(e.DATA_DIR);
  return {
    production: e.NODE_ENV === 'production',
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir,
    pgliteDir: path.join(dataDir, 'pglite'),
    filesDir: path.join(dataDir, 'files'),
    bootstrapApiKey: e.GATEWAY_BOOTSTRAP_API_KEY,
    masterKey: e.GATEWAY_MASTER_KEY,
    logLevel: e.LOG_LEVEL,
    jobPollMs: e.GATEWAY_JOB_POLL_MS,
    jobLeaseMs: e.GATEWAY_JOB_LEASE_MS,
    batch: { pollMs: e.GATEWAY_BATCH_POLL_MS, concurrency: e.GATEWAY_BATCH_CONCURRENCY, retryBaseMs: e.GATEWAY_BATCH_RETRY_BASE_MS },
    jobSubmitDeadlineMs: e.GATEWAY_JOB_SUBMIT_DEADLINE_MS,
    providerEndpoints: endpointOverrides(env),
    providerTimeoutMs: e.GATEWAY_PROVIDER_TIMEOUT_MS,
    jsonLimit: e.GATEWAY_JSON_LIMIT,
    jsonMaxDepth: e.GATEWAY_JSON_MAX_DEPTH,
    uploadLimitBytes: e.GATEWAY_UPLOAD_LIMIT_BYTES,
    multipart: { maxParts: e.GATEWAY_MULTIPART_MAX_PARTS, maxNonFileBytes: e.GATEWAY_MULTIPART_MAX_NON_FILE_BYTES },
    graphqlLimits: {
      maxDepth: e.GATEWAY_GRAPHQL_MAX_DEPTH,
      maxAliases: e.GATEWAY_GRAPHQL_MAX_ALIASES,
      maxDirectives: e.GATEWAY_GRAPHQL_MAX_DIRECTIVES,
      maxTokens: e.GATEWAY_GRAPHQL_MAX_TOKENS,
      maxCost: e.GATEWAY_GRAPHQL_MAX_COST,
      maxPageSize: MAX_PAGE_SIZE,
      defaultListSize: e.GATEWAY_GRAPHQL_DEFAULT_LIST_SIZE,
    },
    federationSecret: e.GATEWAY_FEDERATION_SECRET,
    chatLimits: { maxMessageChars: e.GATEWAY_CHAT_MAX_MESSAGE_CHARS, maxRequestChars: e.GATEWAY_CHAT_MAX_PROMPT_CHARS },
    s3FileStore:
      e.GATEWAY_FILE_STORE === 'local'
        ? null
        : {
            location: e.GATEWAY_FILE_STORE,
            endpoint: e.GATEWAY_FILE_STORE_ENDPOINT,
            region: e.AWS_REGION,
            accessKeyId: e.AWS_ACCESS_KEY_ID,
            secretAccessKey: e.AWS_SECRET_ACCESS_KEY,
            sessionToken: e.AWS_SESSION_TOKEN,
          },
    rateLimit: e.GATEWAY_RATE_LIMIT_PER_MINUTE
      ? { perMinute: e.GATEWAY_RATE_LIMIT_PER_MINUTE, redisUrl: e.REDIS_URL, keyPrefix: e.GATEWAY_REDIS_KEY_PREFIX }
      : null,
    failedAuth: {
      perClientPerMinute: e.GATEWAY_AUTH_FAILURES_PER_MINUTE,
      globalPerMinute: e.GATEWAY_AUTH_FAILURES_GLOBAL_PER_MINUTE,
      redisUrl: e.REDIS_URL,
      keyPrefix: e.GATEWAY_REDIS_KEY_PREFIX,
    },
    trustProxy: trustProxyOf(e.GATEWAY_TRUST_PROXY),
    keyCache: { maxEntries: e.GATEWAY_KEY_CACHE_SIZE, ttlMs: e.GATEWAY_KEY_CACHE_TTL_MS },
    hostedCache: { maxEntries: e.GATEWAY_HOSTED_CACHE_SIZE, maxPartialChars: e.GATEWAY_PARTIAL_CACHE_CHARS, ttlMs: e.GATEWAY_HOSTED_CACHE_TTL_MS },
    corsOrigins: e.GATEWAY_CORS_ORIGINS.split(',')
      .map((o) => o.trim())
      .filter(Boolean),
    database: { connectTimeoutMs: e.GATEWAY_DB_CONNECT_TIMEOUT_MS, queryTimeoutMs: e.GATEWAY_DB_QUERY_TIMEOUT_MS },
    server: {
      headersTimeoutMs: e.GATEWAY_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.GATEWAY_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.GATEWAY_KEEP_ALIVE_TIMEOUT_MS,
    },
    shutdownGraceMs: e.GATEWAY_SHUTDOWN_GRACE_MS,
    usage: {
      enabled: e.GATEWAY_USAGE_LEDGER === 'on',
      flushMs: e.GATEWAY_USAGE_FLUSH_MS,
      maxRows: e.GATEWAY_USAGE_BATCH_ROWS,
      retentionDays: e.GATEWAY_USAGE_RETENTION_DAYS,
    },
    pricesFile: e.GATEWAY_PRICES_FILE,
  };
}

/** `1` (hops), `true`, or addresses/subnets (`loopback, 10.0.0.0/8`) as Express reads them; unset: none trusted. */
function trustProxyOf(value: string | undefined): boolean | number | string {
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  return /^\d+$/.test(value) ? Number(value) : value;
}

/** The provider variables, each with what it must hold: the reason a value does not, or null. */
const PROVIDER_VARIABLES: readonly { name: RegExp; problem: (value: string) => string | null }[] = [
  // Provider endpoints: settings from requests never reach a URL but through these.
  { name: /^GATEWAY_[A-Z0-9_]+_URL$/, problem: (value) => (/^https?:\/\/[^\s]+$/.test(value) ? null : 'must be an http(s) URL') },
  // Where a provider's signed URLs may point besides its own storage.
  { name: /^GATEWAY_[A-Z0-9_]+_DOWNLOAD_HOSTS$/, problem: hostListProblem },
];

/** `GATEWAY_*_URL` and `GATEWAY_*_DOWNLOAD_HOSTS` variables, checked. */
function endpointOverrides(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    const variable = PROVIDER_VARIABLES.find((v) => v.name.test(name));
    if (!variable || value === undefined || value === '') continue;
    const problem = variable.problem(value);
    if (problem) throw new Error(`Invalid configuration: ${name}: ${problem}`);
    out[name] = value;
  }
  return out;
}
