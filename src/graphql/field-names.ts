import { createMethodMiddlewareDecorator } from 'type-graphql';
import { GatewayError, type FieldPath } from '../errors';

/**
 * Where a resolver's arguments are not spelled as the service's input fields (`labels(page:)` feeds
 * the service's `currentPage`), it declares the renames once, service path prefix → its own:
 *
 *     @ServiceFieldNames({ currentPage: 'page', 'method.supervised': 'method' })
 *
 * and errors about those fields name the caller's argument. Other paths pass unchanged.
 */
export function ServiceFieldNames(renames: Record<string, string>): MethodDecorator {
  const prefixes = Object.entries(renames)
    .map(([from, to]) => ({ from: from.split('.'), to: to.split('.') }))
    .sort((a, b) => b.from.length - a.from.length);
  return createMethodMiddlewareDecorator(async (_data, next) => {
    try {
      const result: unknown = await next();
      return result;
    } catch (err) {
      if (!(err instanceof GatewayError) || !err.path) throw err;
      const path = err.path;
      const match = prefixes.find(({ from }) => from.every((segment, i) => path[i] === segment));
      throw match ? err.atPath([...match.to, ...path.slice(match.from.length)]) : err;
    }
  });
}

/** A service field path as GraphQL callers name it: camelCase, dot-separated. */
export const graphqlPath = (path: FieldPath) => path.join('.');
