import type { Workspace } from '../../generated/prisma/client';

export function toWorkspaceJson(workspace: Workspace) {
  return {
    id: workspace.id,
    object: 'workspace',
    slug: workspace.slug,
    name: workspace.name,
    organisation_id: workspace.organisationId,
    created_at: workspace.createdAt.toISOString(),
  };
}
