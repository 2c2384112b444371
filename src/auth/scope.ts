/** Who is calling: resolved from the API key on every request. */
export interface Caller {
  keyId: string;
  organisationId: string;
  /** The key's workspace; null for an organisation (admin) key. */
  workspaceId: string | null;
}

/** The tenant every service and repository method works in. */
export interface Scope {
  organisationId: string;
  workspaceId: string;
}

export const isOrganisationKey = (caller: Caller) => caller.workspaceId === null;
