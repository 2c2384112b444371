/**
 * The Bedrock runtime's Converse and ConverseStream for the fake Bedrock: request checks, the
 * deterministic answer of chat.ts in Converse's shapes, and ConverseStream as an
 * `application/vnd.amazon.eventstream` body written one frame at a time.
 */
import { randomBytes, randomInt } from 'node:crypto';
import type http from 'node:http';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { argumentPieces, describeBytes, fakeReply, type FakeAnswer, type FakeConversation, type FakeTurn } from './fake-model';
import { Constraints, jsonBody, pathSegment, requestIdHeader, validationError, type AwsJsonRequest } from './aws-rest-json';
import { writeChunks, type FakeReply } from './kit';

export interface ConverseCall {
  /** The model id as the client sent it (decoded from the path). */
  modelId: string;
  stream: boolean;
  body: Record<string, unknown>;
}

export interface RuntimeOptions {
  /** Throws the runtime's error when `modelId` cannot be invoked on demand. */
  checkInvocable(modelId: string): void;
  /** Pause between ConverseStream events. */
  streamDelayMs: number;
  onCall(call: ConverseCall): void;
  onStreamAbandoned(): void;
}

const ROLES = ['user', 'assistant'] as const;
const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => new Uint8Array(Buffer.from(text, 'utf8')),
);

/** Checks a Converse request the way the runtime does and returns its messages as chat messages. */
function conversation(body: Record<string, unknown>) {
  const constraints = new Constraints();
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    constraints.fail('messages', messages, 'Member must have length greater than or equal to 1');
  }
  if (body.inferenceConfig !== undefined && constraints.object('inferenceConfig', body.inferenceConfig)) {
    const config = body.inferenceConfig;
    constraints.integer('inferenceConfig.maxTokens', config.maxTokens, { min: 1 });
    for (const name of ['temperature', 'topP'] as const) {
      const value = config[name];
      if (value !== undefined && (typeof value !== 'number' || value < 0 || value > 1)) {
        constraints.fail(`inferenceConfig.${name}`, value, 'Member must be a number between 0 and 1');
      }
    }
  }
  constraints.check();

  const chat = (messages as unknown[]).map((message, i) => {
    const m = message as { role?: unknown; content?: unknown };
    const path = `messages.${i + 1}.member`;
    if (!ROLES.includes(m?.role as (typeof ROLES)[number]))
      constraints.fail(`${path}.role`, m?.role, `Member must satisfy enum value set: [${ROLES.join(', ')}]`);
    if (!Array.isArray(m?.content) || m.content.length === 0) constraints.fail(`${path}.content`, m?.content, 'Member must not be null or empty');
    return { role: String(m?.role), content: m?.content };
  });
  constraints.check();
  if (chat[0].role !== 'user') {
    throw validationError('A conversation must start with a user message. Try again with a conversation that starts with a user message.');
  }
  if (chat.some((m, i) => i > 0 && m.role === chat[i - 1].role)) {
    const message = 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles';
    throw validationError(`${message} and try again.`);
  }
  const system = Array.isArray(body.system) ? [{ role: 'system', content: body.system }] : [];
  return [...system, ...chat] as { role: string; content: Block[] }[];
}

/** A Converse content block (the members the fake reads). */
interface Block {
  text?: string;
  image?: { format?: string; source?: { bytes?: string } };
  toolUse?: { toolUseId?: string; name?: string; input?: unknown };
  toolResult?: { toolUseId?: string; content?: Block[] };
}

/**
 * The conversation as the fake model takes it, checked as the runtime does: tool blocks need a
 * `toolConfig`, a `toolResult` answers a `toolUse` of the assistant turn before it.
 */
function fakeConversation(body: Record<string, unknown>, messages: { role: string; content: Block[] }[]): FakeConversation {
  const config = body.toolConfig as
    { tools?: { toolSpec?: { name?: string; inputSchema?: { json?: unknown } } }[]; toolChoice?: Record<string, any> } | undefined;
  const usesTools = messages.some((m) => m.content.some((b) => b.toolUse || b.toolResult));
  if (usesTools && !config) throw validationError('The toolConfig field must be defined when using toolUse and toolResult content blocks.');
  let open = new Set<string>();
  const turns: FakeTurn[] = [];
  for (const message of messages) {
    if (message.role === 'system') turns.push({ role: 'system', text: message.content.map((b) => b.text ?? '').join('') });
    const results = message.content.filter((b) => b.toolResult);
    for (const { toolResult } of results) {
      if (!open.delete(String(toolResult?.toolUseId))) {
        throw validationError('The number of toolResult blocks at messages.1.content exceeds the number of toolUse blocks of previous turn.');
      }
      turns.push({ role: 'tool', text: (toolResult?.content ?? []).map((b) => b.text ?? '').join('') });
    }
    const text = message.content
      .map((b) => (b.image ? describeBytes(`image/${b.image.format}`, Buffer.from(b.image.source?.bytes ?? '', 'base64').length) : (b.text ?? '')))
      .join('');
    if (message.role !== 'system' && (text || results.length === 0)) turns.push({ role: message.role as FakeTurn['role'], text });
    open = new Set(message.content.flatMap((b) => (b.toolUse ? [String(b.toolUse.toolUseId)] : [])));
  }
  const choice = config?.toolChoice;
  return {
    turns,
    tools: (config?.tools ?? []).map((t) => ({ name: String(t.toolSpec?.name), schema: t.toolSpec?.inputSchema?.json })),
    toolChoice: choice?.tool ? { name: String(choice.tool.name) } : choice?.any ? 'required' : 'auto',
  };
}

const usageOf = (answer: FakeAnswer) => ({
  inputTokens: answer.promptTokens,
  outputTokens: answer.completionTokens,
  totalTokens: answer.promptTokens + answer.completionTokens,
});

/** One event-stream frame; like the real service, each payload carries a `p` field of padding that hides its length. */
function eventFrame(type: string, payload: Record<string, unknown>): Uint8Array {
  const padding = randomBytes(randomInt(8, 32)).toString('base64url');
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: new Uint8Array(Buffer.from(JSON.stringify({ ...payload, p: padding }), 'utf8')),
  });
}

type StopReason = 'end_turn' | 'max_tokens' | 'tool_use';

/** The answer as the model gives it under `inferenceConfig.maxTokens`: cut (a word a token) and stopped with `max_tokens`. */
function withinMaxTokens(answer: FakeAnswer, maxTokens: unknown): { answer: FakeAnswer; stopReason: StopReason } {
  if (answer.toolCalls.length) return { answer, stopReason: 'tool_use' };
  if (typeof maxTokens !== 'number' || answer.completionTokens <= maxTokens) return { answer, stopReason: 'end_turn' };
  const pieces = answer.pieces.slice(0, maxTokens);
  return { answer: { ...answer, pieces, text: pieces.join(''), completionTokens: maxTokens }, stopReason: 'max_tokens' };
}

async function converseStream(res: http.ServerResponse, answer: FakeAnswer, stopReason: StopReason, started: number, opts: RuntimeOptions): Promise<void> {
  const text = answer.pieces.length
    ? [
        ...answer.pieces.map((piece) => eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: piece } })),
        eventFrame('contentBlockStop', { contentBlockIndex: 0 }),
      ]
    : [];
  const first = text.length ? 1 : 0;
  const tools = answer.toolCalls.flatMap((call, i) => [
    eventFrame('contentBlockStart', { contentBlockIndex: first + i, start: { toolUse: { toolUseId: call.id, name: call.name } } }),
    ...argumentPieces(call.arguments).map((input) => eventFrame('contentBlockDelta', { contentBlockIndex: first + i, delta: { toolUse: { input } } })),
    eventFrame('contentBlockStop', { contentBlockIndex: first + i }),
  ]);
  const frames = [
    eventFrame('messageStart', { role: 'assistant' }),
    ...text,
    ...tools,
    eventFrame('messageStop', { stopReason }),
    eventFrame('metadata', { usage: usageOf(answer), metrics: { latencyMs: Date.now() - started } }),
  ];
  const head = { status: 200, headers: { 'content-type': 'application/vnd.amazon.eventstream', ...requestIdHeader() } };
  await writeChunks(res, head, frames, { delayMs: opts.streamDelayMs, onAbandoned: opts.onStreamAbandoned });
}

/** The answer's content blocks: its text, then its tool calls (`toolUse` with the arguments as `input`). */
const contentOf = (answer: FakeAnswer) => [
  ...(answer.text ? [{ text: answer.text }] : []),
  ...answer.toolCalls.map((call) => ({ toolUse: { toolUseId: call.id, name: call.name, input: JSON.parse(call.arguments) as unknown } })),
];

/** The runtime's routes: `POST /model/{modelId}/converse` and `/converse-stream`. */
export function runtimeRoute(opts: RuntimeOptions) {
  return async ({ method, segments, body, res }: AwsJsonRequest): Promise<FakeReply | void | undefined> => {
    const [resource, rawModelId, operation] = segments;
    if (method !== 'POST' || segments.length !== 3 || resource !== 'model' || !['converse', 'converse-stream'].includes(operation)) return undefined;
    const started = Date.now();
    const modelId = pathSegment(rawModelId);
    const stream = operation === 'converse-stream';
    const request = jsonBody(body);
    opts.onCall({ modelId, stream, body: request });
    const { answer, stopReason } = converseAnswer(modelId, request, () => opts.checkInvocable(modelId));
    if (stream) return converseStream(res, answer, stopReason, started, opts);
    return { status: 200, body: converseBody(answer, stopReason, Date.now() - started) };
  };
}

/**
 * The model's answer to a Converse request, checked as the runtime checks it (a ValidationException
 * otherwise); `checkModel` runs between the conversation's checks and the answer, as the runtime orders them.
 */
export function converseAnswer(modelId: string, request: Record<string, unknown>, checkModel: () => void = () => undefined) {
  const messages = conversation(request);
  checkModel();
  const full = fakeReply(modelId, fakeConversation(request, messages));
  return withinMaxTokens(full, (request.inferenceConfig as { maxTokens?: unknown } | undefined)?.maxTokens);
}

/** Converse's response body for an answer. */
export const converseBody = (answer: FakeAnswer, stopReason: StopReason, latencyMs: number) => ({
  output: { message: { role: 'assistant', content: contentOf(answer) } },
  stopReason,
  usage: usageOf(answer),
  metrics: { latencyMs },
});
