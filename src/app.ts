import http from 'node:http';
import express, { type Request, type RequestHandler } from 'express';
import type { Config } from './config';
import { createGraphQLFace } from './graphql/server';
import { notFoundRoute, requireJsonBody, restErrorHandler } from './http/errors';
import { corsPolicy } from './http/cors';
import { refuseDeepJson } from './http/json-depth';
import { refuseUnstorableBody, refuseUnstorableQuery } from './http/text-guard';
import { requestLog } from './http/observability';
import { openApiRoute } from './http/openapi';
import { authenticate, authenticateRequest } from './http/rest';
import { buildServedSchema } from './graphql/schema';
import { createAppContext } from './context';
import { DATABASE_RETRY_AFTER_SECONDS } from './db/outage';
import { GRAPHQL_MODULES } from './modules/graphql-modules';
import type { Logger } from './logger';
import { adminRoutes } from './modules/admin/admin.routes';
import { batchRoutes } from './modules/batches/batch.routes';
import { chatRoutes } from './modules/chat/chat.routes';
import { consoleBuildDir, consoleRoutes, graphqlPageRoute } from './modules/console/console.routes';
import { clientModeRoutes } from './modules/client-mode/client-mode.routes';
import { fileRoutes } from './modules/files/file.routes';
import { fineTuningRoutes } from './modules/fine-tuning/fine-tuning.routes';
import { integrationRoutes } from './modules/integrations/integration.routes';
import { labelRoutes } from './modules/labels/label.routes';
import { modelRoutes } from './modules/models/model.routes';
import { partialRoutes } from './modules/partials/partial.routes';
import { logRoutes, usageRoutes } from './modules/usage/usage.routes';
import type { Services } from './services';
import { graphqlRateLimitErrors, identifyCaller, rateLimit } from './modules/rate-limits/rate-limit.middleware';
import { FailedAuthLimiter } from './modules/rate-limits/failed-auth.limiter';
import { RateLimiter } from './modules/rate-limits/rate-limiter';
import { idempotentCreates } from './modules/idempotency/idempotency.middleware';

/** A readiness probe gets its answer within this time, whatever the database does (its query is bounded separately). */
const READY_TIMEOUT_MS = 1000;

export interface GatewayApp {
  app: express.Express;
  httpServer: http.Server;
  /** Stops GraphQL (draining requests) and the HTTP server. */
  stop(): Promise<void>;
}

/** No browser may guess another type than the one an answer declares (a JSON error read as HTML, say). */
const noSniff: RequestHandler = (_req, res, next) => {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  next();
};

/** Whether a request has a body, as the JSON body parser decides it (type-is): a Content-Length or a Transfer-Encoding. */
const hasBody = (req: Request) => req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;

/**
 * The JSON body of REST requests: its type required, parsed (size and depth limits), its text checked.
 * Each is one middleware where it is mounted, which a request without a body (most reads) passes at
 * once: the parser and its checks would each let it pass anyway.
 */
function jsonBodies(config: Config, services: Services) {
  const steps = [requireJsonBody, express.json({ limit: config.jsonLimit, strict: true, verify: refuseDeepJson(config.jsonMaxDepth) }), refuseUnstorableBody];
  const parse = express.Router().use(steps);
  return {
    parsed: ((req, res, next) => (hasBody(req) ? parse(req, res, next) : next())) as RequestHandler,
    /**
     * The body, then the creating POSTs (the router's root unless named): one with an Idempotency-Key
     * is claimed or replayed right after its body is parsed.
     */
    creating(paths?: string[]): RequestHandler {
      const claim = idempotentCreates(services.idempotency, paths);
      const parseAndClaim = express.Router().use(steps, claim);
      return (req, res, next) => (hasBody(req) ? parseAndClaim(req, res, next) : claim(req, res, next));
    },
  };
}

/** Builds the Express app: both faces over the same services, health and metrics, one error handler. */
export async function createApp(config: Config, services: Services, logger: Logger): Promise<GatewayApp> {
  const app = express();
  app.disable('x-powered-by');
  // No ETag on answers: hashing every body costs each request, and neither face serves conditional GETs.
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.set('trust proxy', config.trustProxy);
  const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs } = config.server;
  const httpServer = http.createServer(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      keepAliveTimeout: keepAliveTimeoutMs,
      // Node enforces the two timeouts above on this period (30 s by default): a slow client is closed soon after its time.
      connectionsCheckingInterval: Math.min(1000, headersTimeoutMs),
    },
    app,
  );
  const { metrics } = services;

  app.use(requestLog(app, logger, metrics));
  app.use(noSniff);
  app.use(corsPolicy(config.corsOrigins));
  // REST first: its requests (most of the traffic) need not walk past the routes below; its routes come later.
  const v1 = express.Router();
  app.use('/v1', v1);
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer from the database within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    });
    try {
      await Promise.race([services.db.prisma.$queryRaw`SELECT 1`, late]);
      res.json({ status: 'ready' });
    } catch (err) {
      // Probes repeat every few seconds through an outage: debug, not warn (the monitor logs the outage once).
      logger.debug({ err }, 'readiness check failed');
      res.setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
      res.status(503).json({ status: 'unavailable' });
    } finally {
      clearTimeout(timer);
    }
  });
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.contentType).send(await metrics.render());
  });

  // Per API key; counted after authentication on both faces (GraphQL looks the key up ahead of its context).
  const limiter = config.rateLimit ? new RateLimiter(config.rateLimit, logger) : null;
  const failures = new FailedAuthLimiter(config.failedAuth, logger);
  await Promise.all([limiter?.ready(2000), failures.ready(2000)]);
  const graphql = await createGraphQLFace({
    config,
    logger,
    httpServer,
    schema: await buildServedSchema(GRAPHQL_MODULES),
    context: async (req) => createAppContext(services, await authenticateRequest(services, failures, req)),
  });
  const graphqlLimit = limiter ? [identifyCaller((req) => authenticateRequest(services, failures, req)), rateLimit(limiter), graphqlRateLimitErrors] : [];
  // A browser opening /graphql gets the explorer (or, in production, a page saying what the endpoint is).
  app.get('/graphql', graphqlPageRoute(consoleBuildDir(), config.production));
  // One layer for every other path to pass, not one per GraphQL middleware.
  app.use('/graphql', express.Router().use(...graphqlLimit, ...graphql.middleware));
  const bodies = jsonBodies(config, services);
  // The contract is public: served before /v1 asks for a key.
  v1.get('/openapi.json', openApiRoute());
  v1.use(authenticate(services, failures));
  v1.use(refuseUnstorableQuery);
  if (limiter) v1.use(rateLimit(limiter));
  // Requests naming a provider (`x-gateway-provider`) are client mode: its routes first, the others reach the hosted routes.
  v1.use(clientModeRoutes(services, bodies));
  v1.use('/labels', bodies.creating(), labelRoutes(services));
  v1.use('/integrations', bodies.creating(), integrationRoutes(services));
  // Multipart uploads: no JSON body parser (the route streams the body itself).
  v1.use('/files', fileRoutes(services));
  v1.use('/fine_tuning/jobs', bodies.creating(), fineTuningRoutes(services));
  v1.use('/prompts/partials', bodies.creating(), partialRoutes(services));
  v1.use('/chat', bodies.parsed, chatRoutes(services, logger));
  v1.use('/batches', bodies.creating(), batchRoutes(services));
  v1.use('/models', modelRoutes(services));
  v1.use('/organization', usageRoutes(services));
  v1.use('/logs', logRoutes(services));
  v1.use('/', bodies.creating(['/api-keys', '/admin/workspaces']), adminRoutes(services));
  app.use('/console', consoleRoutes(consoleBuildDir()));

  app.use(notFoundRoute);
  app.use(restErrorHandler(logger));

  return {
    app,
    httpServer,
    async stop() {
      await graphql.stop();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
      limiter?.close();
      failures.close();
    },
  };
}
