/** The contract's chat answers in OpenAI's wire shapes: `chat.completion` (../../providers/chat-json.ts) and `chat.completion.chunk`. */
import { logprobsJson, usageJson } from '../../providers/chat-json';
import type { ChatChunk, ToolCallDelta } from '../../providers/types';

export { finishReasonOf, toCompletionJson, toolCallJson } from '../../providers/chat-json';

/** What every chunk of one stream repeats. */
export interface StreamHead {
  id: string;
  model: string;
  created: number;
}

/**
 * The events of a translated stream (Bedrock, Vertex AI: the contract's chunks) in OpenAI's
 * `chat.completion.chunk` shape, written as text: what every chunk repeats is serialised once per
 * stream, and a chunk costs its own fields' serialisation only.
 */
export class ChunkEvents {
  /** `data: {"id":…,"object":…,"created":…,"model":…,"choices":` */
  private readonly prefix: string;

  constructor(head: StreamHead) {
    this.prefix = `data: {"id":${JSON.stringify(head.id)},"object":"chat.completion.chunk","created":${head.created},"model":${JSON.stringify(head.model)},"choices":`;
  }

  /** The first event, as OpenAI sends it: each choice's role, no text yet. */
  role(choices: number): string {
    const each = Array.from({ length: choices }, (_, index) => choiceJson(index, '{"role":"assistant","content":""}', null, 'null'));
    return this.event(`[${each.join(',')}]`);
  }

  /** One of the contract's chunks; a usage chunk has no choices and is sent only when the caller asked for it (`stream_options.include_usage`), else ''. */
  of(chunk: Exclude<ChatChunk, { type: 'events' }>, includeUsage: boolean): string {
    switch (chunk.type) {
      case 'delta':
        return this.event(`[${choiceJson(chunk.index ?? 0, deltaJson(chunk), null, chunk.logprobs ? JSON.stringify(logprobsJson(chunk.logprobs)) : 'null')}]`);
      case 'finish':
        return this.event(`[${choiceJson(chunk.index ?? 0, '{}', chunk.finishReason, 'null')}]`);
      case 'usage':
        return includeUsage ? this.event(`[],"usage":${JSON.stringify(usageJson(chunk.usage))}`) : '';
    }
  }

  private event(rest: string): string {
    return `${this.prefix}${rest}}\n\n`;
  }
}

const choiceJson = (index: number, delta: string, finishReason: string | null, logprobs: string) =>
  `{"index":${index},"delta":${delta},"logprobs":${logprobs},"finish_reason":${finishReason === null ? 'null' : JSON.stringify(finishReason)}}`;

/** OpenAI's tool-call delta: `id`, `type` and the name on a call's first piece, the arguments in pieces. */
const toolCallDeltaJson = (call: ToolCallDelta) => ({
  index: call.index,
  ...(call.id ? { id: call.id, type: 'function' as const } : {}),
  function: { ...(call.name ? { name: call.name } : {}), arguments: call.arguments ?? '' },
});

/** A delta's fields (text, refusal, tool-call pieces) as OpenAI's `delta` object. */
function deltaJson(chunk: Extract<ChatChunk, { type: 'delta' }>): string {
  const fields: string[] = [];
  if (chunk.content !== undefined) fields.push(`"content":${JSON.stringify(chunk.content)}`);
  if (chunk.refusal !== undefined) fields.push(`"refusal":${JSON.stringify(chunk.refusal)}`);
  if (chunk.toolCalls) fields.push(`"tool_calls":${JSON.stringify(chunk.toolCalls.map(toolCallDeltaJson))}`);
  return `{${fields.join(',')}}`;
}
