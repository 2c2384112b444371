/**
 * Provider answers read through zod schemas (each provider's in its own folder): an answer missing a
 * field the gateway reads, or carrying it in another type, is the provider's failure, a 502
 * `provider_bad_answer` naming the provider and the field, rather than an `undefined` met further down.
 * The message names types only, never a value the provider sent.
 */
import type { z } from 'zod';
import { GatewayError } from '../errors';

/** A schema an answer is read with: it accepts anything and yields `T`. */
export type AnswerSchema<T> = z.ZodType<T, z.ZodTypeDef, unknown>;

/** `value` read as `schema`; `what` (e.g. `tuning job`) says which answer when the call does not. */
export function parseAnswer<T>(schema: AnswerSchema<T>, value: unknown, provider: string, what?: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const about = what ? ` (${what})` : '';
  return badAnswer(`${provider} ${issue ? describe(issue) : 'answered in an unexpected shape'}${about}`);
}

const badAnswer = (message: string): never => {
  throw new GatewayError('provider', message, { status: 502, code: 'provider_bad_answer' });
};

/** `data[0].id`: the field as a reader of the provider's JSON would write it. */
const fieldOf = (path: readonly (string | number)[]): string =>
  path.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? part : `.${part}`)).join('');

function describe(issue: z.ZodIssue): string {
  const field = fieldOf(issue.path);
  if (issue.code === 'invalid_type') {
    if (field === '') return `answered ${article(issue.received)} where ${article(issue.expected)} was expected`;
    if (issue.received === 'undefined') return `answered without \`${field}\``;
    return `answered \`${field}\` as ${article(issue.received)} where ${article(issue.expected)} was expected`;
  }
  return field === '' ? 'answered in an unexpected shape' : `answered an unexpected \`${field}\``;
}

const article = (type: string): string => (type === 'null' || type === 'undefined' ? type : `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`);
