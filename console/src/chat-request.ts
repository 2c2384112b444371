/**
 * The playground's chat request and streamed answer (no DOM): messages with tool calls and tool
 * results, function tools with JSON Schema parameters, a tool choice and a response format, turned
 * into OpenAI's Chat Completions body; streamed tool-call deltas put back together into whole calls.
 */

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text, as the model wrote it. */
  arguments: string;
}

export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** An assistant message: the tools the model called. */
  toolCalls?: ToolCall[];
  /** A tool message: the call it answers (and that call's function, shown to the user). */
  toolCallId?: string;
  toolName?: string;
}

export interface ToolDraft {
  name: string;
  description: string;
  /** JSON Schema text, as typed. */
  parameters: string;
}

/** `auto`, `none`, `required`, or `function:<name>` to make the model call that tool. */
export type ToolChoice = string;

export interface FormatDraft {
  type: 'text' | 'json_object' | 'json_schema';
  name: string;
  /** JSON Schema text, as typed. */
  schema: string;
  strict: boolean;
}

export const NO_FORMAT: FormatDraft = { type: 'text', name: 'answer', schema: '{\n  "type": "object",\n  "properties": {}\n}', strict: false };

/** A JSON object typed by the user; an error naming `what` if it is not one. */
function jsonObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${what} is not JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

function messageJson(m: Message): Record<string, unknown> {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
  if (m.role === 'assistant' && m.toolCalls?.length) {
    return {
      role: 'assistant',
      content: m.content || null,
      tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
    };
  }
  return { role: m.role, content: m.content };
}

function toolsJson(tools: ToolDraft[], choice: ToolChoice): Record<string, unknown> {
  if (tools.length === 0) return {};
  const names = new Set<string>();
  const json = tools.map((t, i) => {
    const name = t.name.trim();
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name)) throw new Error(`Tool ${i + 1} needs a name of letters, digits, _ or - (64 at most)`);
    if (names.has(name)) throw new Error(`Two tools are named ${name}`);
    names.add(name);
    const parameters = jsonObject(t.parameters, `The parameters of tool ${name}`);
    return { type: 'function', function: { name, ...(t.description.trim() ? { description: t.description.trim() } : {}), parameters } };
  });
  const named = choice.startsWith('function:') ? choice.slice('function:'.length) : null;
  if (named !== null && !names.has(named)) throw new Error(`The tool choice names ${named}, which is not a tool`);
  return { tools: json, tool_choice: named === null ? choice : { type: 'function', function: { name: named } } };
}

function formatJson(format: FormatDraft): Record<string, unknown> {
  if (format.type === 'text') return {};
  if (format.type === 'json_object') return { response_format: { type: 'json_object' } };
  const name = format.name.trim();
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name)) throw new Error('The schema needs a name of letters, digits, _ or - (64 at most)');
  return { response_format: { type: 'json_schema', json_schema: { name, schema: jsonObject(format.schema, 'The response schema'), strict: format.strict } } };
}

/** OpenAI's request body; an Error saying what to fix when a typed JSON text is not valid. */
export function chatBody(model: string, messages: Message[], tools: ToolDraft[], choice: ToolChoice, format: FormatDraft): Record<string, unknown> {
  return { model, messages: messages.map(messageJson), ...toolsJson(tools, choice), ...formatJson(format) };
}

/** One streamed piece of a tool call (OpenAI's `delta.tool_calls[]`): id and name on its first piece, arguments in pieces. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

/** The calls with the deltas of one chunk added (a new index starts a call). */
export function withToolCallDeltas(calls: ToolCall[], deltas: ToolCallDelta[]): ToolCall[] {
  const next = [...calls];
  for (const d of deltas) {
    const call = next[d.index] ?? { id: '', name: '', arguments: '' };
    next[d.index] = {
      id: d.id ?? call.id,
      name: call.name + (d.function?.name ?? ''),
      arguments: call.arguments + (d.function?.arguments ?? ''),
    };
  }
  return next;
}

/** The conversation continued by the model's tool calls and an empty result to fill in for each. */
export function answerToolCalls(messages: Message[], content: string, calls: ToolCall[]): Message[] {
  return [
    ...messages,
    { role: 'assistant', content, toolCalls: calls },
    ...calls.map((c): Message => ({ role: 'tool', content: '', toolCallId: c.id, toolName: c.name })),
  ];
}

/** The answer pretty-printed when it is JSON (JSON mode), else null. */
export function prettyJson(text: string): string | null {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return null;
  }
}
