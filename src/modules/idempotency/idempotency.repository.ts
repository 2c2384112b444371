import type { PrismaClient } from '../../db/database';
import type { IdempotencyKey } from '../../generated/prisma/client';

/** Who owns a key: the API key's organisation, and its workspace ('' for an organisation key). */
export interface IdempotencyOwner {
  organisationId: string;
  scope: string;
}

/** Idempotency-Key rows, always within one owner. */
export class IdempotencyRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Inserts the claim; a unique violation means the key is taken. */
  insert(owner: IdempotencyOwner, key: string, fingerprint: string, expiresAt: Date): Promise<IdempotencyKey> {
    return this.prisma.idempotencyKey.create({ data: { ...owner, key, fingerprint, expiresAt } });
  }

  find(owner: IdempotencyOwner, key: string): Promise<IdempotencyKey | null> {
    return this.prisma.idempotencyKey.findFirst({ where: { ...owner, key } });
  }

  async complete(owner: IdempotencyOwner, id: string, status: number, response: string): Promise<void> {
    await this.prisma.idempotencyKey.updateMany({ where: { ...owner, id }, data: { status, response } });
  }

  /**
   * Claims anew a row still unanswered since before `abandonedBefore`, restarting its clock; false when
   * another request took it over first or its request answered meanwhile (the conditions settle the race).
   */
  async takeOver(owner: IdempotencyOwner, id: string, abandonedBefore: Date, now: Date, expiresAt: Date): Promise<boolean> {
    const { count } = await this.prisma.idempotencyKey.updateMany({
      where: { ...owner, id, status: null, createdAt: { lt: abandonedBefore } },
      data: { createdAt: now, expiresAt },
    });
    return count === 1;
  }

  async remove(owner: IdempotencyOwner, id: string): Promise<void> {
    await this.prisma.idempotencyKey.deleteMany({ where: { ...owner, id } });
  }

  /** Lazy expiry: the owner organisation's rows past their 24 h go when one of its keys is next claimed. */
  async removeExpired(organisationId: string, now: Date): Promise<void> {
    await this.prisma.idempotencyKey.deleteMany({ where: { organisationId, expiresAt: { lt: now } } });
  }
}
