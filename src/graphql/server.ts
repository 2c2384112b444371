import type { Server } from 'node:http';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginLandingPageLocalDefault } from '@apollo/server/plugin/landingPage/default';
import { expressMiddleware } from '@as-integrations/express5';
import cors from 'cors';
import express, { type RequestHandler } from 'express';
import { graphqlUploadExpress } from 'graphql-upload-minimal';
import type { Config } from '../config';
import { GatewayError } from '../errors';
import { API_KEY_HEADER } from '../http/rest';
import type { Logger } from '../logger';
import type { Services } from '../services';
import { createContext, type GraphQLContext } from './context';
import { formatGraphQLError, unauthenticatedGraphQLError } from './errors';
import { buildGatewaySchema } from './schema';

export interface GraphQLFace {
  middleware: RequestHandler[];
  stop(): Promise<void>;
}

/** Apollo Server on the type-graphql schema, mounted as Express middleware at /graphql. */
export async function createGraphQLFace(config: Config, services: Services, logger: Logger, httpServer: Server): Promise<GraphQLFace> {
  const server = new ApolloServer<GraphQLContext>({
    schema: await buildGatewaySchema(),
    introspection: !config.production,
    hideSchemaDetailsFromClientErrors: config.production,
    includeStacktraceInErrorResponses: false,
    csrfPrevention: true,
    allowBatchedHttpRequests: false,
    formatError: formatGraphQLError(logger),
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      config.production ? ApolloServerPluginLandingPageDisabled() : ApolloServerPluginLandingPageLocalDefault({ embed: true }),
    ],
  });
  await server.start();

  const context = async ({ req }: { req: express.Request }) => {
    try {
      return createContext(services, await services.apiKeys.authenticate(req.header(API_KEY_HEADER)));
    } catch (err) {
      if (err instanceof GatewayError) throw unauthenticatedGraphQLError(err);
      throw err;
    }
  };

  return {
    middleware: [
      cors<cors.CorsRequest>(),
      graphqlUploadExpress({ maxFileSize: config.uploadLimitBytes, maxFiles: 1 }),
      express.json({ limit: config.jsonLimit }),
      expressMiddleware(server, { context }),
    ],
    stop: () => server.stop(),
  };
}
