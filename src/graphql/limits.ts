import type { ApolloServerPlugin } from '@apollo/server';
import {
  GraphQLError,
  Kind,
  getNamedType,
  getNullableType,
  isCompositeType,
  isInterfaceType,
  isListType,
  isObjectType,
  type ASTNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationRule,
  type ValueNode,
} from 'graphql';

/**
 * Query limits of the GraphQL face (configured in src/config.ts, `GATEWAY_GRAPHQL_*`), all checked
 * before any resolver runs. Depth, aliases, directives, page sizes and cost are a graphql-js
 * validation rule (Apollo caches validated documents, so the rule sees no variables); the token limit
 * is graphql-js's `parse(…, {maxTokens})`; the cost of `_entities`, whose representations arrive as a
 * variable, is checked again by a plugin once the variables are known.
 */
export interface QueryLimits {
  /** Nesting of fields (the operation's root fields are depth 1). */
  maxDepth: number;
  maxAliases: number;
  maxDirectives: number;
  /** graphql-js lexer tokens of the whole document. */
  maxTokens: number;
  /** Estimated cost, see {@link measureOperation}. */
  maxCost: number;
  /** The largest page size a list argument may ask for. */
  maxPageSize: number;
  /** The size assumed for a list field without a page size argument. */
  defaultListSize: number;
}

/** Arguments that set how many items a list field returns. */
export const PAGE_SIZE_ARGUMENTS = ['pageSize', 'limit', 'first', 'last'] as const;

/** The `extensions.code` of each rejection (HTTP 400). */
export const LIMIT_CODES = {
  depth: 'QUERY_TOO_DEEP',
  aliases: 'TOO_MANY_ALIASES',
  directives: 'TOO_MANY_DIRECTIVES',
  tokens: 'QUERY_TOO_LARGE',
  cost: 'QUERY_TOO_COMPLEX',
  pageSize: 'BAD_USER_INPUT',
} as const;

/** A query refused by a limit. Apollo reports validation errors as GRAPHQL_VALIDATION_FAILED; errors.ts keeps this code. */
export class QueryLimitError extends GraphQLError {
  constructor(message: string, code: string, nodes: ASTNode | readonly ASTNode[] | undefined, extensions: Record<string, unknown> = {}) {
    super(message, { nodes, extensions: { code, ...extensions, http: { status: 400 } } });
    this.name = 'QueryLimitError';
  }
}

/** The limit in graphql-js's message when `maxTokens` stopped the parser (graphql 16 spells it "more that N tokens"). */
export function tokenLimitOf(message: string): number | null {
  const match = /^Syntax Error: Document contains more (?:than|that) (\d+) tokens/.exec(message);
  return match ? Number(match[1]) : null;
}

/**
 * Operations of a type the schema has no root for (`subscription` here) fail in graphql-js only at
 * execution, as a 200 with errors; this rule (as graphql-js 17's KnownOperationTypesRule) makes them
 * a validation error, 400.
 */
export const knownOperationTypesRule: ValidationRule = (context) => ({
  OperationDefinition(operation) {
    if (!context.getSchema().getRootType(operation.operation)) {
      context.reportError(new GraphQLError(`The schema does not support ${operation.operation} operations`, { nodes: operation }));
    }
  },
});

export interface OperationMeasure {
  depth: number;
  aliases: number;
  directives: number;
  cost: number;
  /** Literal page sizes above the limit. */
  oversizedPages: { node: FieldNode; argument: string; value: number }[];
}

interface SetMeasure {
  depth: number;
  aliases: number;
  directives: number;
  cost: number;
}

const ZERO: SetMeasure = { depth: 0, aliases: 0, directives: 0, cost: 0 };

/**
 * Measures one operation, fragments expanded (and memoised, so fragment fan-out cannot make this
 * exponential). Cost: every field returning an object costs 1, leaves cost 0; a list field multiplies
 * the cost of one item (1 + its selections) by its size. The size is the field's page size argument
 * (`pageSize`, `limit`, …) or, for a list inside a page object (`labels(pageSize: 20) { items }`),
 * the page size of the field that returned the page; a variable counts as `maxPageSize` unless
 * `variables` are given; a list without any counts as `defaultListSize`. `_entities` counts its
 * representations. Introspection fields (`__schema`, `__type`) are not measured.
 */
export function measureOperation(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: (name: string) => FragmentDefinitionNode | undefined | null,
  limits: QueryLimits,
  variables?: Record<string, unknown>,
): OperationMeasure {
  const oversizedPages: OperationMeasure['oversizedPages'] = [];
  const memo = new Map<string, SetMeasure>();
  const visiting = new Set<string>();

  const literalSize = (value: ValueNode): number | undefined => {
    switch (value.kind) {
      case Kind.INT:
        return Number(value.value);
      case Kind.LIST:
        return value.values.length;
      case Kind.NULL:
        return undefined;
      case Kind.VARIABLE: {
        const given = variables?.[value.name.value];
        if (variables === undefined) return limits.maxPageSize;
        if (Array.isArray(given)) return given.length;
        return typeof given === 'number' ? given : undefined;
      }
      default:
        return undefined;
    }
  };

  /** The size a field's arguments ask for, if any. */
  const sizeOf = (node: FieldNode): number | undefined => {
    for (const arg of node.arguments ?? []) {
      const name = arg.name.value;
      if (node.name.value === '_entities' && name === 'representations') {
        // Without the variables, the count is left to entityCostPlugin.
        return arg.value.kind === Kind.VARIABLE && variables === undefined ? 1 : literalSize(arg.value);
      }
      if (!(PAGE_SIZE_ARGUMENTS as readonly string[]).includes(name)) continue;
      const size = literalSize(arg.value);
      if (size === undefined) continue;
      if (arg.value.kind !== Kind.VARIABLE && size > limits.maxPageSize) oversizedPages.push({ node, argument: name, value: size });
      return Math.max(0, Math.min(size, limits.maxPageSize));
    }
    return undefined;
  };

  const fieldDef = (parent: GraphQLCompositeType, name: string): GraphQLField<unknown, unknown> | undefined =>
    isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;

  const measureSet = (set: SelectionSetNode, parent: GraphQLCompositeType, inheritedSize: number | undefined): SetMeasure => {
    const total = { ...ZERO };
    const add = (m: SetMeasure, extraDepth = 0) => {
      total.depth = Math.max(total.depth, m.depth + extraDepth);
      total.aliases += m.aliases;
      total.directives += m.directives;
      total.cost += m.cost;
    };
    for (const selection of set.selections) {
      total.directives += selection.directives?.length ?? 0;
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        if (selection.alias) total.aliases += 1;
        if (name.startsWith('__')) continue;
        const def = fieldDef(parent, name);
        if (!def) continue; // Unknown fields are reported by graphql-js's own rules.
        const type = getNullableType(def.type);
        const named = getNamedType(def.type);
        const size = sizeOf(selection);
        const child = selection.selectionSet && isCompositeType(named) ? measureSet(selection.selectionSet, named, isListType(type) ? undefined : size) : ZERO;
        const own = isCompositeType(named) ? 1 : 0;
        const items = isListType(type) ? (size ?? inheritedSize ?? limits.defaultListSize) : 1;
        add({ depth: child.depth, aliases: child.aliases, directives: child.directives, cost: items * (own + child.cost) }, 1);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        if (condition && isCompositeType(condition)) add(measureSet(selection.selectionSet, condition, inheritedSize));
      } else {
        const name = selection.name.value;
        const key = `${name}|${inheritedSize ?? ''}`;
        let measured = memo.get(key);
        if (!measured) {
          const fragment = fragments(name);
          const condition = fragment ? schema.getType(fragment.typeCondition.name.value) : undefined;
          if (!fragment || !condition || !isCompositeType(condition) || visiting.has(name)) continue; // Reported by graphql-js.
          visiting.add(name);
          measured = { ...measureSet(fragment.selectionSet, condition, inheritedSize) };
          measured.directives += fragment.directives?.length ?? 0;
          visiting.delete(name);
          memo.set(key, measured);
        }
        add(measured);
      }
    }
    return total;
  };

  const root = schema.getRootType(operation.operation);
  const measured = root ? measureSet(operation.selectionSet, root, undefined) : ZERO;
  return {
    ...measured,
    directives: measured.directives + (operation.directives?.length ?? 0),
    oversizedPages,
  };
}

/** The validation rule: refuses operations over the depth, alias, directive, page size or cost limits. */
export function queryLimitsRule(limits: QueryLimits): ValidationRule {
  return (context) => ({
    OperationDefinition(operation) {
      const m = measureOperation(context.getSchema(), operation, (name) => context.getFragment(name), limits);
      const at = operation.name ?? operation;
      for (const page of m.oversizedPages) {
        context.reportError(
          new QueryLimitError(`${page.argument} must be at most ${limits.maxPageSize} (got ${page.value})`, LIMIT_CODES.pageSize, page.node, {
            param: page.argument,
          }),
        );
      }
      if (m.depth > limits.maxDepth) {
        context.reportError(new QueryLimitError(`Query depth ${m.depth} exceeds the limit of ${limits.maxDepth}`, LIMIT_CODES.depth, at, { depth: m.depth, maxDepth: limits.maxDepth }));
      }
      if (m.aliases > limits.maxAliases) {
        context.reportError(new QueryLimitError(`Query uses ${m.aliases} aliases, more than the limit of ${limits.maxAliases}`, LIMIT_CODES.aliases, at, { aliases: m.aliases, maxAliases: limits.maxAliases }));
      }
      if (m.directives > limits.maxDirectives) {
        context.reportError(
          new QueryLimitError(`Query uses ${m.directives} directives, more than the limit of ${limits.maxDirectives}`, LIMIT_CODES.directives, at, {
            directives: m.directives,
            maxDirectives: limits.maxDirectives,
          }),
        );
      }
      if (m.cost > limits.maxCost) {
        context.reportError(new QueryLimitError(`Query cost ${m.cost} exceeds the limit of ${limits.maxCost}`, LIMIT_CODES.cost, at, { cost: m.cost, maxCost: limits.maxCost }));
      }
      return false;
    },
  });
}

/**
 * The cost again once the variables are known, for operations whose size depends on them in a way the
 * validation rule cannot bound: `_entities(representations: $representations)`.
 */
export function entityCostPlugin(limits: QueryLimits): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation, document, request, schema }) {
          if (!operation || !usesVariableRepresentations(operation)) return;
          const fragments = new Map(document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));
          const m = measureOperation(schema, operation, (name) => fragments.get(name), limits, request.variables ?? {});
          if (m.cost > limits.maxCost) {
            throw new QueryLimitError(`Query cost ${m.cost} exceeds the limit of ${limits.maxCost}`, LIMIT_CODES.cost, operation.name ?? operation, {
              cost: m.cost,
              maxCost: limits.maxCost,
            });
          }
        },
      };
    },
  };
}

function usesVariableRepresentations(operation: OperationDefinitionNode): boolean {
  return operation.selectionSet.selections.some(
    (s) => s.kind === Kind.FIELD && s.name.value === '_entities' && s.arguments?.some((a) => a.name.value === 'representations' && a.value.kind === Kind.VARIABLE),
  );
}
