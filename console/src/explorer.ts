/**
 * The offline GraphQL explorer: GraphiQL bundled into its own page (React is loaded here only, so the
 * console's page stays small). The schema is the gateway's emitted schema.graphql, built into the page,
 * so the explorer works without introspection (which production turns off) and without the network.
 * Requests carry the console's API key from session storage; GraphiQL's own header editor is not
 * persisted.
 */
import { GraphiQL } from 'graphiql';
import 'graphiql/graphiql.css';
import { buildSchema } from 'graphql';
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
import sdl from '../../schema.graphql?raw';
import { storedKey } from './api';

const DEFAULT_QUERY = `# The gateway's GraphQL face, with the API key you signed in with.
query Jobs {
  fineTuningJobs(limit: 10) {
    items { id status provider model fineTunedModel }
  }
}
`;

const root = document.getElementById('explorer');
if (root) {
  if (storedKey() === null) {
    root.innerHTML = '<main class="explorer-signed-out"><h1>GraphQL explorer</h1><p>Sign in on the <a href="/console/">console</a> first.</p></main>';
  } else {
    const fetcher = async (params: unknown) => {
      const res = await fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': storedKey() ?? '' },
        body: JSON.stringify(params),
      });
      return (await res.json()) as Record<string, unknown>;
    };
    createRoot(root).render(createElement(GraphiQL, { fetcher, schema: buildSchema(sdl), defaultQuery: DEFAULT_QUERY, shouldPersistHeaders: false }));
  }
}
