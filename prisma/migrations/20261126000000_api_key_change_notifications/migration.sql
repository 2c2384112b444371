-- Gateways cache API keys in memory (src/modules/api-keys/api-key.cache.ts). A change to a key row, or to a
-- workspace (an organisation key caches its `default` workspace), is announced to every replica when it
-- commits, whatever made it: REST, GraphQL, the admin CLI, plain SQL, or a cascade from a deleted
-- workspace or organisation. The payload names the key or the organisation, never a secret or hash.
--
-- The function bodies spell their semicolons \073 (octal, in an E'' string): Prisma's Postgres adapter
-- runs a migration script split at every semicolon, quotes and dollar quotes notwithstanding.
CREATE FUNCTION "gateway_notify_api_key_change"() RETURNS trigger LANGUAGE plpgsql
  AS E'BEGIN PERFORM pg_notify(''gateway_api_keys'', ''key:'' || OLD."id"::text)\073 RETURN NULL\073 END';

CREATE TRIGGER "api_keys_notify_change" AFTER UPDATE OR DELETE ON "api_keys"
  FOR EACH ROW EXECUTE FUNCTION "gateway_notify_api_key_change"();

CREATE FUNCTION "gateway_notify_workspace_change"() RETURNS trigger LANGUAGE plpgsql
  AS E'BEGIN PERFORM pg_notify(''gateway_api_keys'', ''organisation:'' || OLD."organisation_id"::text)\073 RETURN NULL\073 END';

CREATE TRIGGER "workspaces_notify_change" AFTER UPDATE OR DELETE ON "workspaces"
  FOR EACH ROW EXECUTE FUNCTION "gateway_notify_workspace_change"();
