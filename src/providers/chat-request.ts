/**
 * The chat contract's request: OpenAI's Chat Completions request (`CreateChatCompletionRequest` of
 * github.com/openai/openai-openapi) in OpenAI's own spelling. It stays in the wire's snake_case, unlike
 * the services' other inputs, because it is a protocol the gateway relays: OpenAI-compatible providers
 * get the body back with only `model` replaced, JSON schemas and metadata keep the caller's keys, and a
 * field the gateway does not know reaches OpenAI and Azure untouched (see `extra`).
 */
import { z } from 'zod';

const text = z.string().max(10_000_000);

const textPart = z.object({ type: z.literal('text'), text }).strict();

const imagePart = z
  .object({
    type: z.literal('image_url'),
    image_url: z.object({ url: z.string().min(1).max(30_000_000), detail: z.enum(['auto', 'low', 'high']).optional() }).strict(),
  })
  .strict();

const audioPart = z.object({ type: z.literal('input_audio'), input_audio: z.object({ data: z.string(), format: z.enum(['wav', 'mp3']) }).strict() }).strict();

const filePart = z
  .object({
    type: z.literal('file'),
    file: z.object({ file_data: z.string().optional(), file_id: z.string().optional(), filename: z.string().optional() }).strict(),
  })
  .strict();

const refusalPart = z.object({ type: z.literal('refusal'), refusal: z.string() }).strict();

/**
 * A string, or else a list checked by `list`: a problem inside the list is reported at its place
 * (`messages.0.content.1.image_url.detail`), not as "no alternative matched" at the content.
 */
function stringOr<T extends z.ZodTypeAny>(list: T) {
  return z.custom<string | z.output<T>>().superRefine((value, ctx) => {
    if (typeof value === 'string') return;
    const parsed = list.safeParse(value);
    if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue(issue);
  });
}

const textContent = stringOr(z.array(textPart).min(1));
const name = z.string().min(1).max(64).optional();

const toolCall = z
  .object({
    id: z.string().min(1).max(256),
    type: z.literal('function'),
    function: z.object({ name: z.string().min(1).max(256), arguments: z.string() }).strict(),
  })
  .strict();

const systemMessage = z.object({ role: z.enum(['system', 'developer']), content: textContent, name }).strict();
const userMessage = z
  .object({ role: z.literal('user'), content: stringOr(z.array(z.discriminatedUnion('type', [textPart, imagePart, audioPart, filePart])).min(1)), name })
  .strict();
const assistantMessage = z
  .object({
    role: z.literal('assistant'),
    content: stringOr(z.array(z.discriminatedUnion('type', [textPart, refusalPart])).nullable()).optional(),
    name,
    refusal: z.string().nullish(),
    tool_calls: z.array(toolCall).min(1).max(512).optional(),
  })
  .strict();
const toolMessage = z.object({ role: z.literal('tool'), content: textContent, tool_call_id: z.string().min(1).max(256) }).strict();

/**
 * What OpenAI's SDK helpers (`runTools`, `parse`) leave on the assistant messages they send back: their
 * own parse results, which OpenAI ignores. The gateway removes them; any other unknown key is a 400.
 */
function withoutSdkResults(message: unknown): unknown {
  if (typeof message !== 'object' || message === null || (message as { role?: unknown }).role !== 'assistant') return message;
  const { parsed: _parsed, ...rest } = message as Record<string, unknown>;
  if (!Array.isArray(rest.tool_calls)) return rest;
  const toolCalls = rest.tool_calls.map((call: unknown) => {
    const fn = (call as { function?: unknown } | null)?.function;
    if (typeof fn !== 'object' || fn === null) return call;
    const { parsed_arguments: _args, ...plain } = fn as Record<string, unknown>;
    return { ...(call as object), function: plain };
  });
  return { ...rest, tool_calls: toolCalls };
}

const message = z.preprocess(withoutSdkResults, z.discriminatedUnion('role', [systemMessage, userMessage, assistantMessage, toolMessage]));

/** A JSON Schema: an object the gateway passes on (or converts) without reading its keys as fields. */
const jsonSchema = z.record(z.unknown());

const functionTool = z
  .object({
    type: z.literal('function'),
    function: z
      .object({
        name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, underscores or dashes'),
        description: z.string().max(100_000).optional(),
        parameters: jsonSchema.optional(),
        strict: z.boolean().nullish(),
      })
      .strict(),
  })
  .strict();

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }).strict() }).strict(),
]);

const responseFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }).strict(),
  z.object({ type: z.literal('json_object') }).strict(),
  z
    .object({
      type: z.literal('json_schema'),
      json_schema: z
        .object({
          name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, underscores or dashes'),
          description: z.string().optional(),
          schema: jsonSchema.optional(),
          strict: z.boolean().nullish(),
        })
        .strict(),
    })
    .strict(),
]);

/** The fields the gateway knows and validates; any other field of the body is `extra`. */
export const chatRequestSchema = z
  .object({
    model: z.string().trim().min(1).max(1024),
    messages: z.array(message).min(1).max(2048),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() }).strict().nullish(),
    max_tokens: z.number().int().min(1).nullish(),
    max_completion_tokens: z.number().int().min(1).nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    stop: z.union([z.string(), z.array(z.string()).min(1).max(4)]).nullish(),
    seed: z.number().int().nullish(),
    n: z.number().int().min(1).max(128).nullish(),
    user: z.string().max(256).optional(),
    tools: z.array(functionTool).min(1).max(128).optional(),
    tool_choice: toolChoice.optional(),
    parallel_tool_calls: z.boolean().optional(),
    response_format: responseFormat.optional(),
    logprobs: z.boolean().nullish(),
    top_logprobs: z.number().int().min(0).max(20).nullish(),
    presence_penalty: z.number().min(-2).max(2).nullish(),
    frequency_penalty: z.number().min(-2).max(2).nullish(),
    logit_bias: z.record(z.string().regex(/^\d+$/, 'must be token ids'), z.number().min(-100).max(100)).nullish(),
    reasoning_effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']).nullish(),
    metadata: z.record(z.string().max(64), z.string().max(512)).nullish(),
    store: z.boolean().nullish(),
    service_tier: z.enum(['auto', 'default', 'flex', 'scale', 'priority', 'fast']).nullish(),
  })
  .passthrough()
  .superRefine((value, ctx) => {
    if (value.stream_options != null && !value.stream)
      ctx.addIssue({ code: 'custom', path: ['stream_options'], message: 'is only allowed when stream is true' });
    if (value.top_logprobs != null && !value.logprobs) ctx.addIssue({ code: 'custom', path: ['top_logprobs'], message: 'needs logprobs: true' });
    if (value.tool_choice !== undefined && value.tool_choice !== 'none' && !value.tools?.length)
      ctx.addIssue({ code: 'custom', path: ['tool_choice'], message: 'is only allowed when tools are given' });
    const named = typeof value.tool_choice === 'object' ? value.tool_choice.function.name : undefined;
    if (named !== undefined && !value.tools?.some((t) => t.function.name === named))
      ctx.addIssue({ code: 'custom', path: ['tool_choice', 'function', 'name'], message: `names no tool of the request ('${named}')` });
  });

/** OpenAI's request as the caller sent it, validated (known fields typed, others kept as they came). */
export type ChatBody = z.output<typeof chatRequestSchema>;
export type ChatBodyInput = z.input<typeof chatRequestSchema>;
export type ChatRequestMessage = ChatBody['messages'][number];

/** The top-level fields the gateway knows (everything else in a body is `extra`). */
export const KNOWN_FIELDS: ReadonlySet<string> = new Set(Object.keys(chatRequestSchema.innerType().shape));

/** The body's fields the gateway does not know, as the caller sent them. */
export const extraFields = (body: ChatBody): Record<string, unknown> => Object.fromEntries(Object.entries(body).filter(([key]) => !KNOWN_FIELDS.has(key)));

/** A message's text: its string, or its text parts joined (what text-only translations send). */
export const textOf = (content: ChatRequestMessage['content']): string =>
  typeof content === 'string' ? content : (content ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');

/** The answer's token limit, whichever of OpenAI's two names the caller used. */
export const maxTokensOf = (body: ChatBody): number | undefined => body.max_completion_tokens ?? body.max_tokens ?? undefined;

/** `stop` as a list. */
export const stopSequencesOf = ({ stop }: ChatBody): string[] | undefined => (typeof stop === 'string' ? [stop] : (stop ?? undefined));

/** A `data:` URL's media type and bytes (base64 only), or null for any other URL. */
export function dataUrl(url: string): { mediaType: string; bytes: Buffer } | null {
  const match = /^data:([\w.+-]+\/[\w.+-]+);base64,([A-Za-z0-9+/=\s]*)$/.exec(url);
  return match ? { mediaType: match[1].toLowerCase(), bytes: Buffer.from(match[2], 'base64') } : null;
}
