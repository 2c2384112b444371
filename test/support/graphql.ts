import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print, type GraphQLFormattedError } from 'graphql';
import { api, type ApiResponse } from './gateway';

/** A GraphQL response body, typed by the operation's generated result type. */
export interface GraphQLBody<TResult> {
  data?: TResult | null;
  errors?: GraphQLFormattedError[];
}

/**
 * Runs a codegen-typed operation (test/graphql/generated/operations.ts) through HTTP: the variables
 * and the result are checked against schema.graphql at compile time.
 */
export async function run<TResult, TVariables extends Record<string, unknown>>(
  gw: { url: string; key: string },
  document: TypedDocumentNode<TResult, TVariables>,
  variables: TVariables,
  options: { key?: string | null; headers?: Record<string, string> } = {},
): Promise<ApiResponse<GraphQLBody<TResult>>> {
  return api<GraphQLBody<TResult>>(gw, 'POST', '/graphql', { body: { query: print(document), variables }, key: options.key, headers: options.headers });
}

/** The data of a successful operation (fails the test with the errors otherwise). */
export async function data<TResult, TVariables extends Record<string, unknown>>(
  gw: { url: string; key: string },
  document: TypedDocumentNode<TResult, TVariables>,
  variables: TVariables,
  options: { key?: string | null } = {},
): Promise<TResult> {
  const res = await run(gw, document, variables, options);
  if (res.body.errors?.length || !res.body.data) throw new Error(`GraphQL errors (HTTP ${res.status}): ${JSON.stringify(res.body.errors)}`);
  return res.body.data;
}
