import http from 'node:http';
import express, { type RequestHandler } from 'express';
import type { Config } from './config';
import { createGraphQLFace } from './graphql/server';
import { notFoundRoute, requireJsonBody, restErrorHandler } from './http/errors';
import { corsPolicy } from './http/cors';
import { whenBody } from './http/body';
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

  const jsonSteps: RequestHandler[] = [
    requireJsonBody,
    express.json({ limit: config.jsonLimit, strict: true, verify: refuseDeepJson(config.jsonMaxDepth) }),
    refuseUnstorableBody,
  ];
  // The creating POSTs (the router's root unless named): one with an Idempotency-Key is claimed or replayed right after its body is parsed.
  const creates = (paths?: string[]) => idempotentCreates(services.idempotency, paths);
  // A request without a body (most reads) passes the JSON body middlewares in one step.
  const jsonBody = whenBody(jsonSteps);
  // The contract is public: served before /v1 asks for a key.
  v1.get('/openapi.json', openApiRoute());
  v1.use(authenticate(services, failures));
  v1.use(refuseUnstorableQuery);
  if (limiter) v1.use(rateLimit(limiter));
  // Requests naming a provider (`x-gateway-provider`) are client mode: its routes first, the others reach the hosted routes.
  v1.use(clientModeRoutes(services, { json: jsonSteps, creates }));
  v1.use('/labels', jsonBody, creates(), labelRoutes(services));
  v1.use('/integrations', jsonBody, creates(), integrationRoutes(services));
  // Multipart uploads: no JSON body parser (the route streams the body itself).
  v1.use('/files', fileRoutes(services));
  v1.use('/fine_tuning/jobs', jsonBody, creates(), fineTuningRoutes(services));
  v1.use('/prompts/partials', jsonBody, creates(), partialRoutes(services));
  v1.use('/chat', jsonBody, chatRoutes(services, logger));
  v1.use('/batches', jsonBody, creates(), batchRoutes(services));
  v1.use('/models', modelRoutes(services));
  v1.use('/organization', usageRoutes(services));
  v1.use('/logs', logRoutes(services));
  v1.use('/', jsonBody, creates(['/api-keys', '/admin/workspaces']), adminRoutes(services));
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
