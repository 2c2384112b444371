/** GET …/tuningJobs/{id}: the job by resource name (or numeric id in the connection's project and region). */
import type { ProviderJob } from '../types';
import { googleFetch, VERTEX, vertexUrl, type VertexConnection } from './connection';
import { toJob } from './mappers';
import { tuningJobName } from './references';
import { parseAnswer, tuningJobSchema, type TuningJob } from './wire';

/** The TuningJob as Vertex reports it (events and checkpoints are read off it too). */
export async function readJob(conn: VertexConnection, id: string): Promise<TuningJob> {
  const answer = await googleFetch(conn, VERTEX, { method: 'GET', url: vertexUrl(conn, tuningJobName(conn, id)) });
  return parseAnswer(tuningJobSchema, answer, VERTEX, 'tuning job');
}

export async function getJob(conn: VertexConnection, id: string): Promise<ProviderJob> {
  return toJob(await readJob(conn, id));
}
