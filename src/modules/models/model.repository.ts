import type { Scope } from '../../auth/scope';
import type { PrismaClient } from '../../db/database';
import { inScope } from '../../db/scope';
import { isUuid } from '../../validation/parse';
import type { HostedJob } from '../fine-tuning/fine-tuning.model';
import { toJob } from '../fine-tuning/fine-tuning.rows';

/** Succeeded jobs with a result: the only ones whose model can be served. */
const SERVABLE = { status: 'succeeded', fineTunedModel: { not: null } } as const;

/** The succeeded hosted jobs behind the workspace's fine-tuned models, always within one workspace. */
export class ModelRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Newest first. */
  async servingJobs(scope: Scope): Promise<HostedJob[]> {
    const rows = await this.prisma.fineTuningJob.findMany({ where: { ...inScope(scope), ...SERVABLE }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
    return rows.map(toJob);
  }

  /** Newest first; the jobs whose `fine_tuned_model` is one of `names` (federation references). */
  async servingJobsNamed(scope: Scope, names: readonly string[]): Promise<HostedJob[]> {
    const rows = await this.prisma.fineTuningJob.findMany({
      where: { ...inScope(scope), ...SERVABLE, fineTunedModel: { in: [...names] } },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    return rows.map(toJob);
  }

  /** The job whose `fine_tuned_model` (or gateway id) is `ref`; the newest when a name repeats. */
  async servingJob(scope: Scope, ref: string): Promise<HostedJob | null> {
    const byName = { fineTunedModel: ref };
    const row = await this.prisma.fineTuningJob.findFirst({
      where: { ...inScope(scope), ...SERVABLE, ...(isUuid(ref) ? { OR: [byName, { id: ref }] } : byName) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    return row ? toJob(row) : null;
  }
}
