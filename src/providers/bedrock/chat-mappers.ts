/**
 * OpenAI's chat request ↔ Converse. System and developer messages become `system`; user turns hold
 * text, images (from `data:` URLs, as bytes) and the results of tool calls (`tool` messages become
 * `toolResult` blocks); assistant turns hold text and `toolUse` blocks (the arguments parsed into
 * `input`); consecutive messages of one role share a turn (Converse wants turns to alternate). Tools go
 * in `toolConfig` (`tool_choice` `auto`/`required`/named → `auto`/`any`/`tool`; `none` sends no
 * tools). Converse has no JSON mode: `response_format` `json_object`/`json_schema` is a forced tool
 * whose input schema is the schema, its input answered as the message's content (so it cannot be
 * combined with the caller's own tools).
 */
import type { ContentBlock, ConverseRequest, ImageFormat, Message, SystemContentBlock, Tool, ToolConfiguration } from '@aws-sdk/client-bedrock-runtime';
import type { DocumentType } from '@smithy/types';
import { invalidField, type FieldPath } from '../../errors';
import { dataUrl, maxTokensOf, stopSequencesOf, textOf, type ChatBody, type ChatRequestMessage } from '../chat-request';
import type { ChatToolCall } from '../types';

const IMAGE_FORMATS: Readonly<Record<string, ImageFormat>> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** What Converse is called with, and the forced tool that stands for JSON mode (its input is the answer). */
export interface ConverseTranslation {
  input: Omit<ConverseRequest, 'modelId'>;
  jsonTool: string | undefined;
}

function imageBlock(url: string, path: FieldPath): ContentBlock {
  const image = dataUrl(url);
  const format = image && IMAGE_FORMATS[image.mediaType];
  if (!image || !format) throw invalidField(path, 'must be a base64 data: URL of a png, jpeg, gif or webp image for Amazon Bedrock');
  return { image: { format, source: { bytes: new Uint8Array(image.bytes) } } };
}

const text = (value: string): ContentBlock[] => (value ? [{ text: value }] : []);

function userBlocks(message: Extract<ChatRequestMessage, { role: 'user' }>, i: number): ContentBlock[] {
  if (typeof message.content === 'string') return text(message.content);
  return message.content.flatMap((part, j) => {
    if (part.type === 'text') return text(part.text);
    if (part.type === 'image_url') return [imageBlock(part.image_url.url, ['messages', i, 'content', j, 'image_url', 'url'])];
    throw invalidField(['messages', i, 'content', j, 'type'], `cannot be ${part.type} with Amazon Bedrock`, 'unsupported_parameter');
  });
}

function toolInput(args: string, path: FieldPath): DocumentType {
  try {
    return JSON.parse(args) as DocumentType;
  } catch {
    throw invalidField(path, 'must be JSON (Amazon Bedrock takes the arguments as an object)');
  }
}

function assistantBlocks(message: Extract<ChatRequestMessage, { role: 'assistant' }>, i: number): ContentBlock[] {
  const calls = (message.tool_calls ?? []).map((call, j): ContentBlock => ({
    toolUse: {
      toolUseId: call.id,
      name: call.function.name,
      input: toolInput(call.function.arguments, ['messages', i, 'tool_calls', j, 'function', 'arguments']),
    },
  }));
  const blocks = [...text(textOf(message.content ?? null) || (message.refusal ?? '')), ...calls];
  if (!blocks.length) throw invalidField(['messages', i, 'content'], 'must not be empty without tool_calls');
  return blocks;
}

function blocksOf(message: ChatRequestMessage, i: number): ContentBlock[] {
  switch (message.role) {
    case 'user':
      return userBlocks(message, i);
    case 'assistant':
      return assistantBlocks(message, i);
    case 'tool':
      return [{ toolResult: { toolUseId: message.tool_call_id, content: [{ text: textOf(message.content) }] } }];
    default:
      return text(textOf(message.content));
  }
}

function conversation(messages: ChatRequestMessage[]): { system: SystemContentBlock[]; turns: Message[] } {
  const system: SystemContentBlock[] = [];
  const turns: Array<{ role: 'user' | 'assistant'; content: ContentBlock[] }> = [];
  messages.forEach((message, i) => {
    if (message.role === 'system' || message.role === 'developer') return void system.push({ text: textOf(message.content) });
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks = blocksOf(message, i);
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  });
  return { system, turns };
}

const toolSpec = (name: string, description: string | undefined, schema: Record<string, unknown> | undefined, strict: boolean | null | undefined): Tool => ({
  toolSpec: {
    name,
    ...(description ? { description } : {}),
    inputSchema: { json: (schema ?? { type: 'object', properties: {} }) as DocumentType },
    ...(strict != null ? { strict } : {}),
  },
});

/** The forced tool answering JSON mode, or undefined without one. */
function jsonMode(body: ChatBody): { toolConfig: ToolConfiguration; jsonTool: string } | undefined {
  const format = body.response_format;
  if (format?.type !== 'json_object' && format?.type !== 'json_schema') return undefined;
  if (body.tools?.length) throw invalidField('response_format', `cannot be ${format.type} together with tools on Amazon Bedrock`, 'unsupported_parameter');
  const schema =
    format.type === 'json_schema' ? format.json_schema : { name: 'json_object', schema: { type: 'object' }, strict: undefined, description: undefined };
  const description = schema.description ?? 'Answer with JSON that matches this schema.';
  return {
    jsonTool: schema.name,
    toolConfig: { tools: [toolSpec(schema.name, description, schema.schema, schema.strict)], toolChoice: { tool: { name: schema.name } } },
  };
}

function toolConfigOf(body: ChatBody): ToolConfiguration | undefined {
  if (!body.tools?.length || body.tool_choice === 'none') return undefined;
  const choice = body.tool_choice;
  return {
    tools: body.tools.map((t) => toolSpec(t.function.name, t.function.description, t.function.parameters, t.function.strict)),
    toolChoice: choice === 'required' ? { any: {} } : typeof choice === 'object' ? { tool: { name: choice.function.name } } : { auto: {} },
  };
}

export function toConverse(body: ChatBody): ConverseTranslation {
  const { system, turns } = conversation(body.messages);
  const inferenceConfig = {
    maxTokens: maxTokensOf(body),
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    stopSequences: stopSequencesOf(body),
  };
  const json = jsonMode(body);
  const toolConfig = json?.toolConfig ?? toolConfigOf(body);
  return {
    jsonTool: json?.jsonTool,
    input: {
      messages: turns,
      ...(system.length ? { system } : {}),
      ...(Object.values(inferenceConfig).some((v) => v !== undefined) ? { inferenceConfig } : {}),
      ...(toolConfig ? { toolConfig } : {}),
    },
  };
}

/** An answer's blocks: the text (JSON mode: the forced tool's input), and the tool calls. */
export function answerOf(blocks: ContentBlock[], jsonTool: string | undefined): { content: string; toolCalls: ChatToolCall[] } {
  let content = '';
  const toolCalls: ChatToolCall[] = [];
  for (const block of blocks) {
    if (block.text) content += block.text;
    const use = block.toolUse;
    if (!use) continue;
    const args = JSON.stringify(use.input ?? {});
    if (use.name === jsonTool) content += args;
    else toolCalls.push({ id: use.toolUseId ?? '', name: use.name ?? '', arguments: args });
  }
  return { content, toolCalls };
}
