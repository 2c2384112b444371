import http from 'node:http';
import express, { type RequestHandler } from 'express';
import type { Config } from './config';
import { createGraphQLFace } from './graphql/server';
import { notFoundRoute, requireJsonBody, restErrorHandler } from './http/errors';
import { Metrics, requestLog } from './http/observability';
import { API_KEY_HEADER, authenticate } from './http/rest';
import { buildServedSchema } from './graphql/schema';
import { createAppContext } from './context';
import { GRAPHQL_MODULES } from './modules/graphql-modules';
import type { Logger } from './logger';
import { adminRoutes } from './modules/admin/admin.routes';
import { chatRoutes } from './modules/chat/chat.routes';
import { consoleBuildDir, consoleRoutes } from './modules/console/console.routes';
import { clientModeFileRoutes, clientModeJobRoutes } from './modules/client-mode/client-mode.routes';
import { fileRoutes } from './modules/files/file.routes';
import { fineTuningRoutes } from './modules/fine-tuning/fine-tuning.routes';
import { integrationRoutes } from './modules/integrations/integration.routes';
import { labelRoutes } from './modules/labels/label.routes';
import { modelRoutes } from './modules/models/model.routes';
import { partialRoutes } from './modules/partials/partial.routes';
import type { Services } from './services';

export interface GatewayApp {
  app: express.Express;
  httpServer: http.Server;
  /** Stops GraphQL (draining requests) and the HTTP server. */
  stop(): Promise<void>;
}

/** Builds the Express app: both faces over the same services, health and metrics, one error handler. */
export async function createApp(config: Config, services: Services, logger: Logger): Promise<GatewayApp> {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  const httpServer = http.createServer(app);
  const metrics = new Metrics();

  app.use(requestLog(logger, metrics));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await services.db.prisma.$queryRaw`SELECT 1`;
      res.json({ status: 'ready' });
    } catch (err) {
      logger.warn({ err }, 'readiness check failed');
      res.status(503).json({ status: 'unavailable' });
    }
  });
  app.get('/metrics', (_req, res) => {
    res.type('text/plain; version=0.0.4').send(metrics.render());
  });

  const graphql = await createGraphQLFace({
    config,
    logger,
    httpServer,
    schema: await buildServedSchema(GRAPHQL_MODULES),
    context: async (req) => createAppContext(services, await services.apiKeys.authenticate(req.header(API_KEY_HEADER))),
  });
  app.use('/graphql', ...graphql.middleware);

  const jsonBody: RequestHandler[] = [requireJsonBody, express.json({ limit: config.jsonLimit, strict: true })];
  const v1 = express.Router();
  v1.use(authenticate(services));
  v1.use('/labels', ...jsonBody, labelRoutes(services));
  v1.use('/integrations', ...jsonBody, integrationRoutes(services));
  // Multipart uploads: no JSON body parser (the route streams the body itself).
  // Requests naming a provider (`x-gateway-provider`) are client mode; the others reach the hosted routes.
  v1.use('/files', clientModeFileRoutes(services), fileRoutes(services));
  v1.use('/fine_tuning/jobs', ...jsonBody, clientModeJobRoutes(services), fineTuningRoutes(services));
  v1.use('/prompts/partials', ...jsonBody, partialRoutes(services));
  v1.use('/chat', ...jsonBody, chatRoutes(services, logger));
  v1.use('/models', modelRoutes(services));
  v1.use('/', ...jsonBody, adminRoutes(services));
  app.use('/v1', v1);
  app.use('/console', consoleRoutes(consoleBuildDir()));

  app.use(notFoundRoute);
  app.use(restErrorHandler(logger));

  return {
    app,
    httpServer,
    async stop() {
      await graphql.stop();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}
