/**
 * OpenAI's Chat Completions request, as far as every provider can honour it: text messages and the
 * common sampling settings. A field the gateway cannot pass on (tools, response_format, n > 1, …)
 * is a 400 naming it rather than silently dropped. Keys are camelCase here (faces convert).
 */
import { z } from 'zod';

const textPart = z.object({ type: z.literal('text'), text: z.string() }).strict();

const message = z
  .object({
    role: z.enum(['system', 'developer', 'user', 'assistant']),
    content: z.union([z.string(), z.array(textPart).min(1)]),
    name: z.string().min(1).max(64).optional(),
  })
  .strict();

export const chatCompletionSchema = z
  .object({
    model: z.string().trim().min(1).max(1024),
    messages: z.array(message).min(1).max(2048),
    stream: z.boolean().nullish(),
    streamOptions: z.object({ includeUsage: z.boolean().optional() }).strict().nullish(),
    maxTokens: z.number().int().min(1).nullish(),
    maxCompletionTokens: z.number().int().min(1).nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    topP: z.number().min(0).max(1).nullish(),
    stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
    seed: z.number().int().nullish(),
    /** Only one choice: more would need one provider call each. */
    n: z.literal(1).nullish(),
    /** OpenAI's end-user id for abuse monitoring: accepted, not sent on (providers have no such field). */
    user: z.string().max(256).optional(),
  })
  .strict()
  .superRefine((value, ctx) => {
    if (value.streamOptions != null && !value.stream) ctx.addIssue({ code: 'custom', path: ['streamOptions'], message: 'is only allowed when stream is true' });
  });

export type ChatCompletionInput = z.input<typeof chatCompletionSchema>;
export type ChatCompletionData = z.output<typeof chatCompletionSchema>;
