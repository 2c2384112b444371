import type DataLoader from 'dataloader';
import { scopedLoader, type ScopedKey } from '../../graphql/scoped-loader';
import type { FineTuningJobCheckpoint, FineTuningJobEvent } from '../../generated/prisma/client';
import type { GatewayFile } from '../files/file.repository';
import type { Services } from '../../services';

function groupByJob<T extends { jobId: string }>(jobIds: string[], rows: T[]): Map<string, T[]> {
  const grouped = new Map<string, T[]>(jobIds.map((id) => [id, []]));
  for (const row of rows) grouped.get(row.jobId)?.push(row);
  return grouped;
}

/** One loader per page size (a field argument), created on first use within the request. */
function perLimit<V>(create: (limit: number) => DataLoader<ScopedKey, V, string>) {
  const loaders = new Map<number, DataLoader<ScopedKey, V, string>>();
  return (limit: number) => {
    let loader = loaders.get(limit);
    if (!loader) loaders.set(limit, (loader = create(limit)));
    return loader;
  };
}

/** The fine-tuning domain's per-request DataLoaders (created for each GraphQL request). */
export function createFineTuningLoaders(services: Services) {
  const { fineTuning, files } = services;
  return {
    /** Key: a file id; value: the file, or null when it is gone (jobs keep their file ids). */
    fileById: scopedLoader<GatewayFile | null>(
      async (scope, ids) => new Map((await files.findMany(scope, ids)).map((file) => [file.id, file])),
      () => null,
    ),
    /** Key: a job id; value: its newest `limit` events, newest first. */
    eventsByJob: perLimit((limit) =>
      scopedLoader<FineTuningJobEvent[]>(async (scope, ids) => groupByJob(ids, await fineTuning.latestEvents(scope, ids, limit)), () => []),
    ),
    /** Key: a job id; value: its newest `limit` checkpoints, newest first. */
    checkpointsByJob: perLimit((limit) =>
      scopedLoader<FineTuningJobCheckpoint[]>(async (scope, ids) => groupByJob(ids, await fineTuning.latestCheckpoints(scope, ids, limit)), () => []),
    ),
  };
}

export type FineTuningLoaders = ReturnType<typeof createFineTuningLoaders>;
