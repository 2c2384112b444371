-- Gateways cache what a hosted chat call resolves (src/modules/chat/hosted.cache.ts): `model` -> its
-- succeeded fine-tuning job -> the job's integration and decrypted credentials, and prompt partial texts,
-- by workspace. A change to any of these rows is announced to every replica when it commits, whatever
-- made it (REST, GraphQL, the admin CLI, plain SQL, a cascade from a deleted workspace), on the channel
-- the API key cache listens on (one listening connection per process). The payload names the workspace
-- only. Jobs other than succeeded ones are never cached, so their frequent updates announce nothing.
--
-- The function bodies spell their semicolons \073: see the api_key_change_notifications migration.
CREATE FUNCTION "gateway_notify_hosted_change"() RETURNS trigger LANGUAGE plpgsql
  AS E'BEGIN PERFORM pg_notify(''gateway_api_keys'', ''hosted:'' || OLD."workspace_id"::text)\073 RETURN NULL\073 END';

CREATE TRIGGER "integrations_notify_change" AFTER UPDATE OR DELETE ON "integrations"
  FOR EACH ROW EXECUTE FUNCTION "gateway_notify_hosted_change"();

CREATE TRIGGER "fine_tuning_jobs_notify_change" AFTER UPDATE OR DELETE ON "fine_tuning_jobs"
  FOR EACH ROW WHEN (OLD."status" = 'succeeded') EXECUTE FUNCTION "gateway_notify_hosted_change"();

CREATE TRIGGER "prompt_partials_notify_change" AFTER UPDATE OR DELETE ON "prompt_partials"
  FOR EACH ROW EXECUTE FUNCTION "gateway_notify_hosted_change"();

CREATE TRIGGER "prompt_partial_versions_notify_change" AFTER UPDATE OR DELETE ON "prompt_partial_versions"
  FOR EACH ROW EXECUTE FUNCTION "gateway_notify_hosted_change"();
