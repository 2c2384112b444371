/**
 * The deterministic "model" behind every fake's chat, over a provider-neutral conversation each fake
 * builds from its own wire format (OpenAI's messages, Converse's turns, Gemini's contents), so every
 * provider answers alike and a test can tell what arrived:
 * - text: `Answer from <model>: <last user or tool text>` (images described as `[image <type> <n> bytes]`);
 * - a user text containing `REFUSE` is refused;
 * - tools offered (and not turned off) while the last turn is the user's: the model calls one (the
 *   named one, else the first), its arguments made from the tool's JSON schema, strings holding the
 *   user's text; after a tool result it answers in text;
 * - JSON mode: the text as `{"answer": …}`; with a schema, a value made from the schema.
 */
import { randomBytes } from 'node:crypto';

export interface FakeTurn {
  role: 'system' | 'user' | 'assistant' | 'tool';
  text: string;
}

export interface FakeTool {
  name: string;
  schema: unknown;
}

export interface FakeConversation {
  turns: FakeTurn[];
  tools?: FakeTool[];
  /** `required`/a name force a call; `none` forbids one. */
  toolChoice?: 'auto' | 'none' | 'required' | { name: string };
  /** JSON mode; `schema` for structured outputs. */
  json?: { schema?: unknown };
}

export interface FakeToolCall {
  id: string;
  name: string;
  /** JSON text. */
  arguments: string;
}

export interface FakeAnswer {
  text: string;
  /** The text split into the pieces a stream sends one by one. */
  pieces: string[];
  refusal: string | null;
  toolCalls: FakeToolCall[];
  promptTokens: number;
  completionTokens: number;
}

/** A rough token count (four characters a token), the same in every fake. */
export const countTokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

export const REFUSAL = "I'm sorry, I can't help with that.";

/** A value of `schema` (a JSON Schema), strings holding `text`. */
export function sampleOf(schema: unknown, text: string): unknown {
  const s = (schema ?? {}) as Record<string, any>;
  if (Array.isArray(s.enum)) return s.enum[0];
  if ('const' in s) return s.const;
  const alternatives = s.anyOf ?? s.oneOf;
  if (Array.isArray(alternatives)) return sampleOf(alternatives[0], text);
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  // Vertex's schemas spell types in capitals.
  switch (typeof type === 'string' ? type.toLowerCase() : type) {
    case 'string':
      return text;
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [sampleOf(s.items, text)];
    case 'null':
      return null;
    default:
      return Object.fromEntries(Object.entries((s.properties ?? {}) as Record<string, unknown>).map(([key, value]) => [key, sampleOf(value, text)]));
  }
}

const splitPieces = (text: string) => text.match(/\S+\s*/g) ?? [text];

/** The answer of `model` to `conversation`. */
export function fakeReply(model: string, conversation: FakeConversation): FakeAnswer {
  const { turns, tools = [], toolChoice = 'auto', json } = conversation;
  const last = [...turns].reverse().find((t) => t.role === 'user' || t.role === 'tool');
  const said = last?.text ?? '';
  const promptTokens = turns.reduce((sum, t) => sum + countTokens(t.text), 0);
  const base = { promptTokens, refusal: null, toolCalls: [] };
  if (last?.role === 'user' && said.includes('REFUSE')) return { ...base, text: '', pieces: [], refusal: REFUSAL, completionTokens: countTokens(REFUSAL) };
  if (last?.role === 'user' && tools.length && toolChoice !== 'none') {
    const tool = typeof toolChoice === 'object' ? tools.find((t) => t.name === toolChoice.name) : tools[0];
    if (tool) {
      const call = { id: `call_${randomBytes(9).toString('hex')}`, name: tool.name, arguments: JSON.stringify(sampleOf(tool.schema, said)) };
      return { ...base, text: '', pieces: [], toolCalls: [call], completionTokens: countTokens(call.arguments) };
    }
  }
  const answer = `Answer from ${model}: ${said}`.trim();
  const text = json ? JSON.stringify(json.schema ? sampleOf(json.schema, answer) : { answer }) : answer;
  return { ...base, text, pieces: splitPieces(text), completionTokens: countTokens(text) };
}

/** The pieces a streamed tool call's arguments come in: thirds, or pieces of `size` characters (about a token each, as OpenAI streams them). */
export const argumentPieces = (args: string, size?: number) => {
  if (size) return args.match(new RegExp(`[\\s\\S]{1,${Math.max(1, Math.floor(size))}}`, 'g')) ?? [args];
  const third = Math.max(1, Math.ceil(args.length / 3));
  return [args.slice(0, third), args.slice(third, 2 * third), args.slice(2 * third)].filter(Boolean);
};

/** How an image reached the fake, for the answer to show it: `[image image/png 68 bytes]` or `[image https://…]`. */
export function describeImage(url: string): string {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return data ? `[image ${data[1]} ${Buffer.from(data[2], 'base64').length} bytes]` : `[image ${url}]`;
}

/** How image bytes reached the fake (Converse's `image` block, Gemini's `inlineData`), as `describeImage` says it. */
export const describeBytes = (mediaType: string, bytes: number) => `[image ${mediaType} ${bytes} bytes]`;
