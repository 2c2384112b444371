import type { PrismaClient } from '../../db/database';
import type { UsageRow } from './usage.model';

/** The usage ledger's rows. */
export class UsageRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async insert(rows: UsageRow[]): Promise<void> {
    await this.prisma.usageRecord.createMany({ data: rows });
  }

  async deleteBefore(time: Date): Promise<number> {
    const { count } = await this.prisma.usageRecord.deleteMany({ where: { time: { lt: time } } });
    return count;
  }
}
