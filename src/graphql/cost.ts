/**
 * Query cost, declared on the fields that make it (type-graphql's `complexity` option) and added up by
 * graphql-query-complexity once the variables are known: an object costs 1, a leaf nothing, a list its
 * size times one item, where the size is the field's page-size argument (or its default):
 *
 *     @Query(() => LabelPageType, { complexity: pageCost('pageSize', 50) })   // 1 + pageSize × one item
 *     @Field(() => [LabelType], { complexity: itemCost })                      // the items of a page
 *     @FieldResolver(() => [EventType], { complexity: listCost('limit', 20) }) // limit × (1 + an event)
 *
 * A list of objects without a declaration counts the configured default list size. Estimators read
 * numbers and list lengths only, never strings: the cost cache (limits.ts) keys on nothing else.
 */
import { fieldExtensionsEstimator, getComplexity, type ComplexityEstimator, type ComplexityEstimatorArgs } from 'graphql-query-complexity';
import { getNamedType, getNullableType, isCompositeType, isListType, type DocumentNode, type GraphQLSchema } from 'graphql';
import { MAX_PAGE_SIZE } from '../validation/parse';

type Cost = (options: ComplexityEstimatorArgs) => number;

/** The size a list asks for: its argument when given (capped like every page), else its default. */
function sizeOf(args: Record<string, unknown>, argument: string | null, defaultSize: number): number {
  const given = argument === null ? undefined : args[argument];
  return typeof given === 'number' ? Math.max(0, Math.min(given, MAX_PAGE_SIZE)) : defaultSize;
}

/** A list field of objects: `size × (1 + one item)`. */
export const listCost =
  (argument: string | null, defaultSize: number): Cost =>
  ({ args, childComplexity }) =>
    sizeOf(args, argument, defaultSize) * (1 + childComplexity);

/** A field returning a page object whose `items` are sized by this field's argument: `1 + size × (the page's fields)`. */
export const pageCost =
  (argument: string, defaultSize: number): Cost =>
  ({ args, childComplexity }) =>
    1 + sizeOf(args, argument, defaultSize) * childComplexity;

/** The `items` of a page object: one item; the field that returned the page multiplies it. */
export const itemCost: Cost = ({ childComplexity }) => 1 + childComplexity;

/** Federation's `_entities`: one object per representation asked for. */
const entitiesCost: ComplexityEstimator = ({ field, args, childComplexity }) => {
  if (field.name !== '_entities') return undefined;
  const representations: unknown = args.representations;
  return (Array.isArray(representations) ? representations.length : 1) * (1 + childComplexity);
};

/**
 * Introspection (`__schema`, `__type`) costs nothing: it reads the schema, never the database, and
 * the standard query that tools send (graphql-js's `getIntrospectionQuery()`) would otherwise count
 * every type's fields as lists of default size, far over any limit. Production turns introspection off.
 */
const introspectionCost: ComplexityEstimator = ({ field }) => (field.name.startsWith('__') ? 0 : undefined);

/** Fields without a declaration: objects 1, leaves nothing, lists of objects the default list size. */
const defaultCost =
  (defaultListSize: number): ComplexityEstimator =>
  ({ field, childComplexity }) => {
    if (!isCompositeType(getNamedType(field.type))) return 0;
    const items = isListType(getNullableType(field.type)) ? defaultListSize : 1;
    return items * (1 + childComplexity);
  };

export function costOf(
  schema: GraphQLSchema,
  query: DocumentNode,
  variables: Record<string, unknown>,
  operationName: string | undefined,
  defaultListSize: number,
): number {
  return getComplexity({
    schema,
    query,
    variables,
    operationName,
    estimators: [introspectionCost, entitiesCost, fieldExtensionsEstimator(), defaultCost(defaultListSize)],
  });
}
