/**
 * Announces a change to what a workspace's hosted chat calls resolve (a job, an integration, a prompt
 * partial): the change is answered once every replica has dropped what it cached of the workspace.
 */
export interface WorkspaceChanges {
  /**
   * Runs `change`; unless `wrote` says it wrote nothing, resolves once every listening process has
   * heard the database announce it (bounded), so the next request to any replica sees it.
   */
  announce<T>(workspaceId: string, change: () => Promise<T>, wrote?: (result: T) => boolean): Promise<T>;
}
