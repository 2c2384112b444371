import type DataLoader from 'dataloader';
import { scopedLoader, type ScopedKey } from '../../graphql/scoped-loader';
import type { JobCheckpoint, JobEvent } from './fine-tuning.model';
import type { GatewayFile } from '../files/file.repository';
import type { AppContext } from '../../context';

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

/** The fine-tuning domain's per-request DataLoaders (`ctx.loaders.get(fineTuningLoaders)`). */
export function fineTuningLoaders({ services }: AppContext) {
  const { fineTuning, files } = services;
  return {
    /** Key: a file id; value: the file, or null when it is gone (jobs keep their file ids). */
    fileById: scopedLoader<GatewayFile | null>(
      async (scope, ids) => new Map((await files.findMany(scope, ids)).map((file) => [file.id, file])),
      () => null,
    ),
    /** Key: a job id; value: its newest `limit` events, newest first. */
    eventsByJob: perLimit((limit) =>
      scopedLoader<JobEvent[]>(
        async (scope, ids) => groupByJob(ids, await fineTuning.latestEvents(scope, ids, limit)),
        () => [],
      ),
    ),
    /** Key: a job id; value: its newest `limit` checkpoints, newest first. */
    checkpointsByJob: perLimit((limit) =>
      scopedLoader<JobCheckpoint[]>(
        async (scope, ids) => groupByJob(ids, await fineTuning.latestCheckpoints(scope, ids, limit)),
        () => [],
      ),
    ),
  };
}
