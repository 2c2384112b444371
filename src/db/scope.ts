import type { Scope } from '../auth/scope';
import { Prisma } from '../generated/prisma/client';

/** The `where` (and `data`) part that keeps a query inside one tenant: every repository query starts from it. */
export const inScope = (scope: Scope) => ({ organisationId: scope.organisationId, workspaceId: scope.workspaceId });

/** The same condition for raw SQL on a table with `organisation_id` and `workspace_id` columns. */
export const scopeSql = (scope: Scope) => Prisma.sql`organisation_id = ${scope.organisationId}::uuid AND workspace_id = ${scope.workspaceId}::uuid`;
