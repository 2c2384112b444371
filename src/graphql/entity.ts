import DataLoader from 'dataloader';
import { isObjectType, type GraphQLSchema } from 'graphql';
import { Directive, getMetadataStorage } from 'type-graphql';
import type { Scope } from '../auth/scope';
import type { TenantContext } from './context';

/**
 * Federation entities. A type opts in where its resolver is (which knows the services and the
 * mapper, so the type's own file imports neither), naming how its references are loaded (through the
 * same services or DataLoaders as the queries):
 *
 *     registerEntity(LabelType, loadByIds((scope, ids, ctx: AppContext) => ctx.services.labels.findMany(scope, ids), toLabelType));
 *
 * The class gets `@key(fields: "id")` and `_entities` resolves `{__typename: "Label", id}` with the
 * loader, batched per request and type, in the caller's scope ({@link entityScope}): an id of
 * another tenant (or none at all) resolves to null, never to data.
 *
 * test/graphql/federation.test.ts fails when an object type with an `id: ID!` field is neither an
 * entity nor exempted there, so later types get federation by default.
 */

export const ENTITY_KEY_FIELD = 'id';

/**
 * Loads the entities with these ids for the caller, aligned with `ids`: null (or undefined) for an id
 * that does not exist in the caller's scope.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each entity names its application context; the registry is context-agnostic
type AnyContext = TenantContext<any>;

export type EntityLoader<T, C extends AnyContext = AnyContext> = (ids: readonly string[], ctx: C) => Promise<ReadonlyArray<T | null | undefined>>;

interface EntityRegistration {
  /** The type-graphql class (type-graphql's metadata is keyed by it). */
  target: object;
  /** Builds the request's DataLoader for this type (one per request, see RequestCache). A method: its context parameter is the entity's own. */
  loader(this: void, ctx: AnyContext): DataLoader<string, unknown>;
}

const registrations: EntityRegistration[] = [];

/** Marks a type-graphql `@ObjectType` class as a federation entity keyed by `id`. */
export function registerEntity<T, C extends AnyContext>(target: abstract new () => unknown, load: EntityLoader<T, C>): void {
  const loader = (ctx: C) =>
    new DataLoader<string, unknown>(async (ids) => {
      const found = await load(ids, ctx);
      return ids.map((_, i) => found[i] ?? null);
    });
  Directive(`@key(fields: "${ENTITY_KEY_FIELD}")`)(target);
  registrations.push({ target, loader });
}

/**
 * The scope entity references resolve in: the caller's default scope, exactly as a query without
 * `workspaceId` (a workspace key: its workspace; an organisation key: its `default` workspace).
 */
export const entityScope = (ctx: AnyContext): Promise<Scope> => ctx.scope();

/** An entity loader over a batched "rows of the scope with these ids" service method. */
export function loadByIds<R extends { id: string }, T, C extends AnyContext>(
  findMany: (scope: Scope, ids: string[], ctx: C) => Promise<R[]>,
  toType: (row: R) => T,
): EntityLoader<T, C> {
  return async (ids, ctx) => {
    const rows = await findMany(await entityScope(ctx), [...ids], ctx);
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => {
      const row = byId.get(id);
      return row ? toType(row) : null;
    });
  };
}

export interface EntityDefinition {
  typeName: string;
  /** `__resolveReference` for the subgraph's resolver map. */
  resolveReference(this: void, reference: Record<string, unknown>, ctx: AnyContext): Promise<unknown> | null;
}

/** The entities of a built schema: the registered classes whose object type it contains. */
export function schemaEntities(schema: GraphQLSchema): EntityDefinition[] {
  const objectTypes = getMetadataStorage().objectTypes;
  const found = new Map<string, EntityDefinition>();
  for (const registration of registrations) {
    const { target } = registration;
    const typeName = objectTypes.find((meta) => meta.target === target)?.name;
    if (!typeName || !isObjectType(schema.getType(typeName))) continue;
    found.set(typeName, {
      typeName,
      resolveReference(reference, ctx) {
        const id = reference[ENTITY_KEY_FIELD];
        return typeof id === 'string' ? ctx.loaders.get(registration.loader).load(id) : null;
      },
    });
  }
  return [...found.values()];
}
