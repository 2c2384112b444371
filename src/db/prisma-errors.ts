import { Prisma } from '../generated/prisma/client';

export type Tx = Prisma.TransactionClient;

/** True when a write broke a unique constraint (Prisma's P2002). */
export function isUniqueViolation(err: unknown): boolean {
  return err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002';
}
