/** Who is calling: resolved from the API key on every request. */
export interface Caller {
  keyId: string;
  organisationId: string;
  /** The key's workspace; null for an organisation (admin) key. */
  workspaceId: string | null;
  /**
   * For an organisation key: its organisation's `default` workspace, read with the key (null: there is
   * none), so a request that names no workspace needs no lookup. Undefined when not read.
   */
  defaultWorkspaceId?: string | null;
}

/** The tenant every service and repository method works in. */
export interface Scope {
  organisationId: string;
  workspaceId: string;
}

/** A scope looked up on first use: client mode needs the workspace only to find a stored integration. */
export type LazyScope = () => Promise<Scope>;

export const isOrganisationKey = (caller: Caller) => caller.workspaceId === null;
