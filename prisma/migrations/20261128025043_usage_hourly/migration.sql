-- CreateTable
CREATE TABLE "usage_hourly" (
    "organisation_id" UUID NOT NULL,
    "hour" TIMESTAMPTZ(3) NOT NULL,
    "workspace_id" UUID NOT NULL,
    "api_key_id" UUID NOT NULL,
    "operation" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "batch" BOOLEAN NOT NULL,
    "input_tokens" BIGINT NOT NULL,
    "cached_tokens" BIGINT NOT NULL,
    "output_tokens" BIGINT NOT NULL,
    "requests" BIGINT NOT NULL,

    CONSTRAINT "usage_hourly_pkey" PRIMARY KEY ("organisation_id","hour","workspace_id","api_key_id","operation","model","batch")
);

-- CreateIndex
CREATE INDEX "usage_hourly_hour_idx" ON "usage_hourly"("hour");

-- usage_hourly is kept by a trigger: every INSERT into usage_records (the ledger's batched writes, a
-- finished fine-tuning job, a provider batch's results, plain SQL) adds its rows' sums to their hours in
-- the same transaction, with one upsert per statement. Groups are upserted in key order so that two
-- writers adding to the same hours lock them in the same order. A key column's "none" is the nil UUID.
-- Pruning deletes whole hours from both tables (src/modules/usage/usage.repository.ts).
--
-- The function bodies spell their semicolons \073: see the api_key_change_notifications migration.
CREATE FUNCTION "gateway_usage_hourly_add"() RETURNS trigger LANGUAGE plpgsql
  AS E'BEGIN
    INSERT INTO "usage_hourly" AS h ("organisation_id", "hour", "workspace_id", "api_key_id", "operation", "model", "batch",
      "input_tokens", "cached_tokens", "output_tokens", "requests")
    SELECT "organisation_id", to_timestamp(floor(extract(epoch FROM "time") / 3600)::bigint * 3600),
      coalesce("workspace_id", ''00000000-0000-0000-0000-000000000000''), coalesce("api_key_id", ''00000000-0000-0000-0000-000000000000''),
      "operation", "model", "batch", sum("input_tokens"), sum("cached_tokens"), sum("output_tokens"), count(*)
    FROM "inserted_usage" GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
    ON CONFLICT ("organisation_id", "hour", "workspace_id", "api_key_id", "operation", "model", "batch") DO UPDATE SET
      "input_tokens" = h."input_tokens" + EXCLUDED."input_tokens", "cached_tokens" = h."cached_tokens" + EXCLUDED."cached_tokens",
      "output_tokens" = h."output_tokens" + EXCLUDED."output_tokens", "requests" = h."requests" + EXCLUDED."requests"\073
    RETURN NULL\073
  END';

-- The rows already in the ledger are summed and the trigger created in one statement (one transaction),
-- with inserts held back meanwhile: no row is counted twice or missed by a gateway writing during the migration.
DO E'BEGIN
  LOCK TABLE "usage_records" IN SHARE ROW EXCLUSIVE MODE\073
  INSERT INTO "usage_hourly" ("organisation_id", "hour", "workspace_id", "api_key_id", "operation", "model", "batch",
    "input_tokens", "cached_tokens", "output_tokens", "requests")
  SELECT "organisation_id", to_timestamp(floor(extract(epoch FROM "time") / 3600)::bigint * 3600),
    coalesce("workspace_id", ''00000000-0000-0000-0000-000000000000''), coalesce("api_key_id", ''00000000-0000-0000-0000-000000000000''),
    "operation", "model", "batch", sum("input_tokens"), sum("cached_tokens"), sum("output_tokens"), count(*)
  FROM "usage_records" GROUP BY 1, 2, 3, 4, 5, 6, 7\073
  CREATE TRIGGER "usage_records_hourly" AFTER INSERT ON "usage_records" REFERENCING NEW TABLE AS "inserted_usage"
    FOR EACH STATEMENT EXECUTE FUNCTION "gateway_usage_hourly_add"()\073
END';
