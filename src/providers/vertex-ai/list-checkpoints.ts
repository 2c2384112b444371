/** The tuned model's checkpoints (`tunedModel.checkpoints`), newest first. */
import type { PageInput, ProviderCheckpoint, ProviderPage } from '../types';
import type { VertexConnection } from './connection';
import { readJob } from './get-job';
import { jobCheckpoints, pageOf } from './history';

export async function listCheckpoints(conn: VertexConnection, id: string, page: PageInput): Promise<ProviderPage<ProviderCheckpoint>> {
  return pageOf(jobCheckpoints(await readJob(conn, id)), page, 'checkpoint');
}
