import type { Server } from 'node:http';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { processRequest } from 'graphql-upload-minimal';
import type { Busboy } from 'busboy';
import type { GraphQLSchema } from 'graphql';
import type { Config } from '../config';
import { GatewayError } from '../errors';
import type { Logger } from '../logger';
import { databaseUnavailable } from '../db/outage';
import { JSON_TOO_DEEP, jsonTooDeepError, refuseDeepJson, valueTooDeep } from '../http/json-depth';
import { guardMultipart, type MultipartLimits } from '../http/multipart-guard';
import { formatGraphQLError, contextGraphQLError, unavailablePlugin } from './errors';
import { serviceSdlGate } from './federation';
import { unstorableTextPlugin } from './text';
import { costLimitPlugin, knownOperationTypesRule, queryLimitsRule } from './limits';

export interface GraphQLFace {
  middleware: (RequestHandler | ErrorRequestHandler)[];
  stop(): Promise<void>;
}

/**
 * Apollo Server on the type-graphql schema served as a Federation v2 subgraph, mounted as Express
 * middleware at /graphql. Query limits (depth, aliases, directives, tokens, cost, page sizes) refuse a
 * query before any resolver runs; batched requests are refused; production hides introspection and
 * field suggestions.
 */
export interface GraphQLFaceOptions<C extends object> {
  config: Config;
  logger: Logger;
  httpServer: Server;
  /** The served (subgraph) schema. */
  schema: GraphQLSchema;
  /** The context of a request; a GatewayError thrown here (an unknown API key) answers as UNAUTHENTICATED. */
  context: (req: express.Request) => Promise<C>;
}

export async function createGraphQLFace<C extends object>({
  config,
  logger,
  httpServer,
  schema,
  context: contextOf,
}: GraphQLFaceOptions<C>): Promise<GraphQLFace> {
  const limits = config.graphqlLimits;
  const server = new ApolloServer<C>({
    schema,
    introspection: !config.production,
    hideSchemaDetailsFromClientErrors: config.production,
    includeStacktraceInErrorResponses: false,
    csrfPrevention: true,
    allowBatchedHttpRequests: false,
    // main.ts owns SIGTERM/SIGINT and stops everything in order; Apollo's own handler would race it.
    stopOnTerminationSignals: false,
    parseOptions: { maxTokens: limits.maxTokens },
    validationRules: [knownOperationTypesRule, queryLimitsRule(limits)],
    formatError: formatGraphQLError(logger, { hideSuggestions: config.production }),
    plugins: [
      serviceSdlGate({ secret: config.federationSecret, production: config.production }),
      costLimitPlugin(limits),
      unstorableTextPlugin,
      unavailablePlugin(),
      // Apollo would add federated tracing (ftv1) to a subgraph; no router reports to Apollo Studio here.
      ApolloServerPluginInlineTraceDisabled(),
      // No field declares a cache hint, so Apollo's cache-control plugin would only time every field to
      // conclude `no-store` (a per-field cost on every request): answer that directly.
      ApolloServerPluginCacheControlDisabled(),
      noStorePlugin,
      // Drains the whole HTTP server (REST too) on stop: in-flight requests finish within the grace period.
      ApolloServerPluginDrainHttpServer({ httpServer, stopGracePeriodMillis: config.shutdownGraceMs }),
      // Apollo's landing page (Sandbox) loads from a CDN: browsers get the console's explorer instead (app.ts).
      ApolloServerPluginLandingPageDisabled(),
    ],
  });
  await server.start();

  const context = async ({ req }: { req: express.Request }) => {
    try {
      return await contextOf(req);
    } catch (err) {
      const mapped = err instanceof GatewayError ? err : databaseUnavailable(err);
      if (mapped) throw contextGraphQLError(mapped);
      throw err;
    }
  };

  return {
    middleware: [
      graphqlUploads(config),
      express.json({ limit: config.jsonLimit, verify: refuseDeepJson(config.jsonMaxDepth) }),
      bodyErrors(config, logger),
      expressMiddleware(server, { context }),
    ],
    stop: () => server.stop(),
  };
}

const MAYBE_MULTIPART = /multipart\/form-data/i;

/**
 * GraphQL multipart requests (uploads) through graphql-upload-minimal, as its Express middleware does,
 * plus the limits a JSON body has: parts and bytes besides the file (multipart-guard.ts) and the
 * nesting of the `operations` field.
 */
function graphqlUploads(config: Config): RequestHandler {
  // busboy flags a file on *reaching* maxFileSize: one byte more lets a file of exactly the limit through.
  const options = { maxFileSize: config.uploadLimitBytes + 1, maxFiles: 1 };
  return (req, res, next) => {
    // Most requests are JSON: a Content-Type that cannot be multipart skips parsing it (`req.is`) at all.
    if (!MAYBE_MULTIPART.test(req.headers['content-type'] ?? '') || !req.is('multipart/form-data')) {
      next();
      return;
    }
    watchParser(req, config.multipart);
    processRequest(req, res, options).then((body) => {
      if (valueTooDeep(body, config.jsonMaxDepth)) {
        next(jsonTooDeepError(config.jsonMaxDepth));
        return;
      }
      req.body = body;
      next();
    }, next);
  };
}

/**
 * graphql-upload-minimal makes its busboy parser inside and only hands it to the request's `pipe`:
 * that one call is where the guard can see it. A failed guard destroys the parser with its error,
 * which the library answers like its own limits.
 */
function watchParser(req: express.Request, limits: MultipartLimits): void {
  req.pipe = <T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T => {
    // Back to the prototype's pipe for this call and any later one.
    delete (req as Partial<Pick<express.Request, 'pipe'>>).pipe;
    const parser = destination as unknown as Busboy;
    guardMultipart(req, parser, limits, (err) => parser.destroy(err));
    return req.pipe(destination, options);
  };
}

/** Answers are never cacheable (they depend on the API key): what Apollo's cache-control plugin concluded. */
const noStorePlugin: ApolloServerPlugin = {
  requestDidStart: () =>
    Promise.resolve({
      willSendResponse: ({ response }) => {
        response.http.headers.set('cache-control', 'no-store');
        return Promise.resolve();
      },
    }),
};

/** Body parser failures as GraphQL errors (not the REST error shape): 400, 413 or 415 with a code. */
function bodyErrors(config: Config, logger: Logger): ErrorRequestHandler {
  return (err: { type?: string; status?: number; message?: string }, _req, res, next) => {
    const answer = (status: number, code: string, message: string) => {
      res.status(status).json({ errors: [{ message, extensions: { code } }] });
    };
    switch (err.type) {
      case 'entity.too.large':
        return answer(413, 'PAYLOAD_TOO_LARGE', `Request body larger than ${config.jsonLimit}`);
      case 'entity.parse.failed':
        return answer(400, 'BAD_REQUEST', 'Malformed JSON body');
      case JSON_TOO_DEEP:
        return answer(400, 'BAD_REQUEST', err.message ?? 'The JSON body is nested too deeply');
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return answer(415, 'UNSUPPORTED_MEDIA_TYPE', 'Unsupported body encoding or charset');
      default:
        // Multipart (upload) errors carry their status: 413 for a file over the limit, 400 otherwise.
        if (err.status === 413) return answer(413, 'PAYLOAD_TOO_LARGE', err.message ?? 'Request body too large');
        if (typeof err.status === 'number' && err.status >= 400 && err.status < 500) return answer(err.status, 'BAD_REQUEST', err.message ?? 'Bad request');
        logger.debug({ err }, 'GraphQL request failed before Apollo');
        next(err);
    }
  };
}
