import type { ApolloServerPlugin } from '@apollo/server';
import { costOf } from './cost';
import {
  GraphQLError,
  Kind,
  getNamedType,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  type ASTNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationRule,
} from 'graphql';

/**
 * Costs already computed, by parsed document: Apollo hands every request with the same query text the
 * same cached document, so a repeated query (the usual case) is costed once per sizing instead of
 * walking it again. A cost depends on the variables only through numbers and list lengths (page sizes,
 * `_entities` representations, see cost.ts), so strings, the ids that differ from request to request,
 * are left out of the key. Bounded: a document with too many sizings starts over.
 */
class CostCache {
  private readonly byDocument = new WeakMap<DocumentNode, Map<string, number>>();

  of(document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown>, compute: () => number | null): number | null {
    let sizings = this.byDocument.get(document);
    if (!sizings) this.byDocument.set(document, (sizings = new Map<string, number>()));
    const key = `${operationName ?? ''}\0${JSON.stringify(variables, (_name, value: unknown) => (typeof value === 'string' ? '' : value))}`;
    const known = sizings.get(key);
    if (known !== undefined) return known;
    const cost = compute();
    // Variables that failed coercion are not remembered: other values of the same shape may pass.
    if (cost === null) return null;
    if (sizings.size >= MAX_SIZINGS_PER_DOCUMENT) sizings.clear();
    sizings.set(key, cost);
    return cost;
  }
}

const MAX_SIZINGS_PER_DOCUMENT = 100;

/**
 * Query limits of the GraphQL face (configured in src/config.ts, `GATEWAY_GRAPHQL_*`), all checked
 * before any resolver runs. Depth, aliases, directives and literal page sizes are a graphql-js
 * validation rule (Apollo caches validated documents, so the rule sees no variables); the token limit
 * is graphql-js's `parse(…, {maxTokens})`; the cost, declared on fields (cost.ts), is added up by a
 * plugin once the variables are known.
 */
export interface QueryLimits {
  /** Nesting of fields (the operation's root fields are depth 1). */
  maxDepth: number;
  maxAliases: number;
  maxDirectives: number;
  /** graphql-js lexer tokens of the whole document. */
  maxTokens: number;
  /** Estimated cost, see cost.ts. */
  maxCost: number;
  /** The largest page size a list argument may ask for. */
  maxPageSize: number;
  /** The size assumed for a list of objects whose cost is not declared. */
  defaultListSize: number;
}

/** Arguments that set how many items a list field returns: a literal above the cap is refused. */
const PAGE_SIZE_ARGUMENTS: ReadonlySet<string> = new Set(['pageSize', 'limit', 'first', 'last']);

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
  /** Literal page sizes above the limit. */
  oversizedPages: { node: FieldNode; argument: string; value: number }[];
}

interface SetMeasure {
  depth: number;
  aliases: number;
  directives: number;
}

const ZERO: SetMeasure = { depth: 0, aliases: 0, directives: 0 };

/**
 * Measures one operation, fragments expanded (and memoised, so fragment fan-out cannot make this
 * exponential): its depth, aliases and directives, and the literal page sizes above the cap.
 * Introspection fields (`__schema`, `__type`) are not measured.
 */
export function measureOperation(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: (name: string) => FragmentDefinitionNode | undefined | null,
  limits: QueryLimits,
): OperationMeasure {
  const measurer = new OperationMeasurer(schema, fragments, limits);
  const root = schema.getRootType(operation.operation);
  const measured = root ? measurer.measureSet(operation.selectionSet, root) : ZERO;
  return {
    ...measured,
    directives: measured.directives + (operation.directives?.length ?? 0),
    oversizedPages: measurer.oversizedPages,
  };
}

/** One walk over an operation; fragments are measured once each (memo) and cycles are left to graphql-js. */
class OperationMeasurer {
  readonly oversizedPages: OperationMeasure['oversizedPages'] = [];
  private readonly memo = new Map<string, SetMeasure>();
  private readonly visiting = new Set<string>();

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: (name: string) => FragmentDefinitionNode | undefined | null,
    private readonly limits: QueryLimits,
  ) {}

  measureSet(set: SelectionSetNode, parent: GraphQLCompositeType): SetMeasure {
    const total = { ...ZERO };
    const add = (m: SetMeasure, extraDepth = 0) => {
      total.depth = Math.max(total.depth, m.depth + extraDepth);
      total.aliases += m.aliases;
      total.directives += m.directives;
    };
    for (const selection of set.selections) {
      total.directives += selection.directives?.length ?? 0;
      if (selection.kind === Kind.FIELD) {
        if (selection.alias) total.aliases += 1;
        const field = this.measureField(selection, parent);
        if (field) add(field, 1);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition ? this.schema.getType(selection.typeCondition.name.value) : parent;
        if (condition && isCompositeType(condition)) add(this.measureSet(selection.selectionSet, condition));
      } else {
        add(this.measureSpread(selection.name.value));
      }
    }
    return total;
  }

  /** Undefined for fields that add no depth: introspection, and unknown fields (graphql-js reports those). */
  private measureField(node: FieldNode, parent: GraphQLCompositeType): SetMeasure | undefined {
    const name = node.name.value;
    if (name.startsWith('__')) return undefined;
    const def: GraphQLField<unknown, unknown> | undefined = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;
    if (!def) return undefined;
    this.checkPageSize(node);
    const named = getNamedType(def.type);
    return node.selectionSet && isCompositeType(named) ? this.measureSet(node.selectionSet, named) : ZERO;
  }

  private measureSpread(name: string): SetMeasure {
    const known = this.memo.get(name);
    if (known) return known;
    const fragment = this.fragments(name);
    const condition = fragment ? this.schema.getType(fragment.typeCondition.name.value) : undefined;
    if (!fragment || !condition || !isCompositeType(condition) || this.visiting.has(name)) return ZERO; // Reported by graphql-js.
    this.visiting.add(name);
    const measured = { ...this.measureSet(fragment.selectionSet, condition) };
    measured.directives += fragment.directives?.length ?? 0;
    this.visiting.delete(name);
    this.memo.set(name, measured);
    return measured;
  }

  /** Reports a literal page size above the cap (a variable is checked by the service). */
  private checkPageSize(node: FieldNode): void {
    for (const arg of node.arguments ?? []) {
      if (PAGE_SIZE_ARGUMENTS.has(arg.name.value) && arg.value.kind === Kind.INT && Number(arg.value.value) > this.limits.maxPageSize) {
        this.oversizedPages.push({ node, argument: arg.name.value, value: Number(arg.value.value) });
      }
    }
  }
}

/** The validation rule: refuses operations over the depth, alias, directive or page size limits. */
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
        context.reportError(
          new QueryLimitError(`Query depth ${m.depth} exceeds the limit of ${limits.maxDepth}`, LIMIT_CODES.depth, at, {
            depth: m.depth,
            maxDepth: limits.maxDepth,
          }),
        );
      }
      if (m.aliases > limits.maxAliases) {
        context.reportError(
          new QueryLimitError(`Query uses ${m.aliases} aliases, more than the limit of ${limits.maxAliases}`, LIMIT_CODES.aliases, at, {
            aliases: m.aliases,
            maxAliases: limits.maxAliases,
          }),
        );
      }
      if (m.directives > limits.maxDirectives) {
        context.reportError(
          new QueryLimitError(`Query uses ${m.directives} directives, more than the limit of ${limits.maxDirectives}`, LIMIT_CODES.directives, at, {
            directives: m.directives,
            maxDirectives: limits.maxDirectives,
          }),
        );
      }
      return false;
    },
  });
}

/**
 * The cost limit, once the variables are known (a page size or `_entities`' representations may
 * come as variables): after the operation is resolved, before any resolver runs.
 */
export function costLimitPlugin(limits: QueryLimits): ApolloServerPlugin {
  const costs = new CostCache();
  return {
    requestDidStart: () =>
      Promise.resolve({
        didResolveOperation: ({ operation, document, request, schema }) => {
          if (!operation) return Promise.resolve();
          let cost: number | null;
          try {
            cost = costs.of(document, request.operationName, request.variables ?? {}, () => {
              try {
                return costOf(schema, document, request.variables ?? {}, request.operationName ?? undefined, limits.defaultListSize);
              } catch {
                // Variables that do not fit their types: execution refuses them with its own 400, before any resolver.
                return null;
              }
            });
          } catch (err) {
            // Variables nested deeper than the stack goes (the body parser's depth limit raised far): the caller's 400.
            if (!(err instanceof RangeError)) throw err;
            return Promise.reject(
              new GraphQLError('The variables are nested too deeply to be read', { extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } }),
            );
          }
          if (cost !== null && cost > limits.maxCost) {
            const message = `Query cost ${cost} exceeds the limit of ${limits.maxCost}`;
            return Promise.reject(new QueryLimitError(message, LIMIT_CODES.cost, operation.name ?? operation, { cost, maxCost: limits.maxCost }));
          }
          return Promise.resolve();
        },
      }),
  };
}
