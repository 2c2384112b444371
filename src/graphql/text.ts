import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, Kind, visit, type DocumentNode, type ValueNode } from 'graphql';
import type { FieldPath } from '../errors';
import { invalidText, isStorableText, unstorableTextPath } from '../validation/text';

/** The path of the first string literal in an argument's value that Postgres cannot store, or null. */
function literalPath(value: ValueNode, path: FieldPath): FieldPath | null {
  switch (value.kind) {
    case Kind.STRING:
      return isStorableText(value.value) ? null : path;
    case Kind.LIST:
      for (const [i, item] of value.values.entries()) {
        const found = literalPath(item, [...path, i]);
        if (found) return found;
      }
      return null;
    case Kind.OBJECT:
      for (const field of value.fields) {
        const found = literalPath(field.value, [...path, field.name.value]);
        if (found) return found;
      }
      return null;
    default:
      return null;
  }
}

/**
 * What {@link findUnstorableLiteral} found in each document: Apollo parses a query string once and
 * hands every later request of it the same document, so a document is walked once.
 */
const literalsChecked = new WeakMap<DocumentNode, FieldPath | null>();

function unstorableLiteral(document: DocumentNode): FieldPath | null {
  let found = literalsChecked.get(document);
  if (found === undefined) literalsChecked.set(document, (found = findUnstorableLiteral(document)));
  return found;
}

/** The first argument literal of the document holding text Postgres cannot store. */
function findUnstorableLiteral(document: DocumentNode): FieldPath | null {
  let found: FieldPath | null = null;
  visit(document, {
    Argument(node) {
      found ??= literalPath(node.value, [node.name.value]);
      return found ? false : undefined;
    },
  });
  return found;
}

/**
 * Text Postgres cannot store (NUL, unpaired surrogates) in a variable or an argument literal is
 * refused before any resolver runs: BAD_USER_INPUT naming the variable's or argument's path, as
 * the REST face refuses it at its edge (src/http/text-guard.ts).
 */
export const unstorableTextPlugin: ApolloServerPlugin = {
  requestDidStart: () =>
    Promise.resolve({
      didResolveOperation: ({ document, request }) => {
        const path = unstorableTextPath(request.variables ?? {}) ?? unstorableLiteral(document);
        if (!path) return Promise.resolve();
        const err = invalidText(path.join('.'));
        const { param, message } = err.render(() => '');
        return Promise.reject(
          new GraphQLError(message, { extensions: { code: err.graphqlCode, param, errorCode: err.answerCode, http: { status: err.status } } }),
        );
      },
    }),
};
