/**
 * POST …/tuningJobs. Never retried: a repeat after a lost answer would start a second job; the
 * gateway job id travels as a label instead, so an interrupted submission finds its job (findJob).
 */
import type { CreateJobInput, ProviderJob } from '../types';
import { googleFetch, parentPath, VERTEX, vertexUrl, type VertexConnection } from './connection';
import { toCreateBody, toJob } from './mappers';
import { parseAnswer, tuningJobSchema } from './wire';

export async function createJob(conn: VertexConnection, input: CreateJobInput): Promise<ProviderJob> {
  const url = vertexUrl(conn, `${parentPath(conn)}/tuningJobs`);
  const answer = await googleFetch(conn, VERTEX, { method: 'POST', url, json: toCreateBody(input) });
  return toJob(parseAnswer(tuningJobSchema, answer, VERTEX, 'tuning job'));
}
