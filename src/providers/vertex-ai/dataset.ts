/**
 * OpenAI chat JSONL → Gemini's supervised-tuning format, one line at a time (the registry streams
 * the upload through it): system (and developer) messages become `systemInstruction`, user turns
 * `{role: "user", parts: [{text}]}`, assistant turns `{role: "model", …}`. A line that has no Gemini
 * equivalent (tool calls, images, a system message mid-conversation, no final assistant turn) is
 * refused naming the reason, never dropped. Open models tuned on Vertex AI (`meta/…`, `qwen/…`) keep
 * OpenAI's chat format, so their lines pass unchanged.
 */
import { DatasetLineError } from '../dataset';
import type { DatasetFormat } from '../module';

interface GeminiPart {
  text: string;
}

interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiExample {
  systemInstruction?: { parts: GeminiPart[] };
  contents: GeminiContent[];
}

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);

/** An open model tuned on Vertex AI is named `publisher/model@version` (`meta/llama3_1@llama-3.1-8b`); Gemini models have no publisher. */
export const isOpenModel = (model: string | undefined): boolean => model !== undefined && /^[a-z0-9_-]+\/[^/]+$/.test(model);

/** A message's text parts: a string, or OpenAI's array of `{type: "text", text}` parts. */
function partsOf(content: unknown, at: string): GeminiPart[] {
  if (typeof content === 'string') return [{ text: content }];
  if (Array.isArray(content) && content.length > 0) {
    return content.map((part) => {
      if (isObject(part) && part.type === 'text' && typeof part.text === 'string') return { text: part.text };
      throw new DatasetLineError(`${at}: only text content can be converted to Gemini's format`);
    });
  }
  throw new DatasetLineError(`${at}: content must be a string or a list of text parts`);
}

function roleOf(message: Record<string, unknown>, at: string): 'system' | 'user' | 'model' {
  const callsTools = message.tool_calls !== undefined || message.function_call !== undefined;
  if (callsTools) throw new DatasetLineError(`${at}: tool calls cannot be converted to Gemini's format`);
  switch (message.role) {
    case 'system':
    case 'developer':
      return 'system';
    case 'user':
      return 'user';
    case 'assistant':
      return 'model';
    default:
      throw new DatasetLineError(`${at}: role must be system, developer, user or assistant (tool messages cannot be converted)`);
  }
}

/** One OpenAI chat example as a Gemini tuning example. */
export function toGeminiExample(example: unknown): GeminiExample {
  if (!isObject(example) || !Array.isArray(example.messages) || example.messages.length === 0) {
    throw new DatasetLineError('expected {"messages": [...]} with at least one message');
  }
  const system: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  example.messages.forEach((message: unknown, i) => {
    const at = `messages[${i}]`;
    if (!isObject(message)) throw new DatasetLineError(`${at} must be an object`);
    const role = roleOf(message, at);
    const parts = partsOf(message.content, at);
    if (role !== 'system') contents.push({ role, parts });
    else if (contents.length === 0) system.push(...parts);
    else throw new DatasetLineError(`${at}: a system message must come before the conversation (Gemini has one system instruction)`);
  });
  if (contents.at(-1)?.role !== 'model') throw new DatasetLineError('the last message must be from the assistant (what the model learns to answer)');
  return { ...(system.length ? { systemInstruction: { parts: system } } : {}), contents };
}

export const geminiDataset: DatasetFormat = {
  converter: (model) => (isOpenModel(model) ? (example) => example : toGeminiExample),
};
