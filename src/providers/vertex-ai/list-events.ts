/** The job's events, synthesised from the tuning job (see history.ts), newest first. */
import type { PageInput, ProviderEvent, ProviderPage } from '../types';
import type { VertexConnection } from './connection';
import { readJob } from './get-job';
import { jobEvents, pageOf } from './history';

export async function listEvents(conn: VertexConnection, id: string, page: PageInput): Promise<ProviderPage<ProviderEvent>> {
  return pageOf(jobEvents(await readJob(conn, id)), page, 'event');
}
