-- usage_records keeps one index besides its id, (organisation_id, time): every read is scoped to an
-- organisation (a workspace's reads add a filter on it), and pruning deletes organisation by organisation
-- (src/modules/usage/usage.repository.ts). The two indexes dropped here were written on every ledger row
-- and read by nothing else: about 17 % of an insert's cost on PGlite.
DROP INDEX "usage_records_time_idx";

DROP INDEX "usage_records_workspace_id_time_idx";
