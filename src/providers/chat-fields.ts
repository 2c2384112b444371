/**
 * What of OpenAI's chat request each provider carries. A provider module declares the fields (and the
 * kinds of content) it passes on or translates; a request using anything else is a 400
 * `unsupported_parameter` naming the field and the provider, before any call: nothing the caller asked
 * for is silently dropped. The README's field × provider matrix is generated from these declarations.
 */
import { GatewayError, type FieldPath } from '../errors';
import type { ChatBody } from './chat-request';

/** Fields of OpenAI's request (REST names), and values of them that not every provider can carry. */
export const CHAT_FIELDS = [
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format.json_object',
  'response_format.json_schema',
  'image_url (data: URL)',
  'image_url (https URL)',
  'input_audio',
  'file',
  'n',
  'logprobs',
  'top_logprobs',
  'presence_penalty',
  'frequency_penalty',
  'logit_bias',
  'max_tokens',
  'max_completion_tokens',
  'reasoning_effort',
  'metadata',
  'store',
  'service_tier',
  'user',
  'seed',
  'stop',
  'temperature',
  'top_p',
  'stream_options',
] as const;

export type ChatField = (typeof CHAT_FIELDS)[number];

export interface ChatSupport {
  /** What the provider carries, passed on or translated. */
  fields: readonly ChatField[];
  /** Fields the gateway does not know are passed on untouched (a new OpenAI field works without a release). */
  unknownFields: boolean;
}

/** Every field of CHAT_FIELDS but those listed. */
export const allChatFieldsBut = (...missing: ChatField[]): ChatField[] => CHAT_FIELDS.filter((f) => !missing.includes(f));

/** Where a request uses `field`, for the error naming it. */
interface Use {
  field: ChatField | null;
  path: FieldPath;
}

/** The fields that are top-level fields of the body (the others are values of one, or kinds of content). */
const TOP_LEVEL: readonly ChatField[] = CHAT_FIELDS.filter((f) => !f.includes(' ') && !f.includes('.') && f !== 'input_audio' && f !== 'file');

/** Values that ask for what every provider does anyway: they are no use of the field. */
const DEFAULTS: Readonly<Partial<Record<ChatField, unknown>>> = {
  n: 1,
  logprobs: false,
  presence_penalty: 0,
  frequency_penalty: 0,
  store: false,
  parallel_tool_calls: true,
};

/** What the body uses, each with where (the first place for content kinds). */
function uses(body: ChatBody, extra: Record<string, unknown>): Use[] {
  const found: Use[] = [];
  for (const field of TOP_LEVEL) {
    const value = (body as Record<string, unknown>)[field];
    if (value !== undefined && value !== null && value !== DEFAULTS[field]) found.push({ field, path: [field] });
  }
  const format = body.response_format?.type;
  if (format === 'json_object' || format === 'json_schema') found.push({ field: `response_format.${format}`, path: ['response_format', 'type'] });
  body.messages.forEach((message, i) => {
    if (message.role === 'tool') found.push({ field: 'tools', path: ['messages', i, 'role'] });
    if (message.role === 'assistant' && message.tool_calls) found.push({ field: 'tools', path: ['messages', i, 'tool_calls'] });
    if (message.role !== 'user' || typeof message.content === 'string') return;
    message.content.forEach((part, j) => {
      if (part.type === 'image_url') {
        const field = part.image_url.url.startsWith('data:') ? 'image_url (data: URL)' : 'image_url (https URL)';
        found.push({ field, path: ['messages', i, 'content', j, 'image_url', 'url'] });
      } else if (part.type !== 'text') found.push({ field: part.type, path: ['messages', i, 'content', j] });
    });
  });
  for (const key of Object.keys(extra)) found.push({ field: null, path: [key] });
  return found;
}

/** Why `use` is refused, after the param the error names. */
function reason(use: Use, provider: string): string {
  if (use.field === null) return `is not a field the gateway knows: it passes such fields on to OpenAI and Azure OpenAI only, not to ${provider}`;
  if (use.field === 'image_url (https URL)')
    return `an image by URL is not supported by ${provider}: send it as a data: URL (the gateway never fetches a caller's URL)`;
  return `${use.field} is not supported by ${provider}`;
}

/** Refuses (400 `unsupported_parameter`) the first thing the body uses that `provider` does not carry. */
export function checkChatSupport(body: ChatBody, extra: Record<string, unknown>, support: ChatSupport, provider: string): void {
  const carried = new Set<ChatField>(support.fields);
  const refused = uses(body, extra).find((use) => (use.field === null ? !support.unknownFields : !carried.has(use.field)));
  if (refused) throw new GatewayError('invalid_request', reason(refused, provider), { path: refused.path, aboutField: true, code: 'unsupported_parameter' });
}
