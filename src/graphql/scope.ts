import { createParameterDecorator } from 'type-graphql';
import type { TenantContext } from './context';

/**
 * Resolver parameters carrying the tenant scope, so resolvers never resolve it by hand:
 *
 *     label(@Arg('id') id: string, @WorkspaceScope() scope: Scope)        // declares `workspaceId: String`
 *     createLabel(@Arg('input') input: CreateLabelInputType, @InputScope() scope: Scope)  // reads input.workspaceId
 */

const workspaceArgument = {
  name: 'workspaceId',
  typeFunc: () => String,
  options: { nullable: true, description: "Workspace UUID or slug (organisation keys); default: the key's workspace." },
};

/** The scope named by an optional `workspaceId` argument, which this decorator declares. */
export function WorkspaceScope() {
  return createParameterDecorator<TenantContext>(({ args, context }) => context.scope(stringOrNull(args.workspaceId)), { arg: workspaceArgument });
}

/** The scope named by `workspaceId` inside the `input` argument (mutations that take an input object). */
export function InputScope() {
  return createParameterDecorator<TenantContext>(({ args, context }) => {
    const input: unknown = args.input;
    const ref = input && typeof input === 'object' && 'workspaceId' in input ? input.workspaceId : null;
    return context.scope(stringOrNull(ref));
  });
}

const stringOrNull = (value: unknown) => (typeof value === 'string' ? value : null);
