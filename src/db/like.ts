/**
 * Text for Prisma's `contains`, `startsWith` and `endsWith` filters, matched as it is written. Prisma
 * puts the value into a LIKE/ILIKE pattern without escaping it, so `%` and `_` would match anything and
 * a `\` escape the next character; Postgres's default escape character is `\`.
 */
export const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, '\\$&');
