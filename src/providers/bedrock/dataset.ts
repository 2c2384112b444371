/**
 * OpenAI chat JSONL → Bedrock's training records, one line at a time (the registry streams the
 * upload through this; see ../dataset.ts). The format depends on the base model's family:
 * - Nova: Converse records `{schemaVersion: "bedrock-conversation-2024", system?: [{text}], messages: [{role, content: [{text}]}]}`;
 * - Claude: `{system?: "…", messages: [{role, content: "…"}]}`;
 * - Titan-style text models: `{prompt, completion}`, one exchange (a system message leads the prompt).
 * A line without a system message is kept (it simply has none). A line Bedrock could not take —
 * tool calls, other roles, turns that do not alternate user/assistant, no final assistant answer — is
 * refused with the reason, never dropped. `name` and `weight` have no Bedrock equivalent and go.
 */
import { DatasetLineError } from '../dataset';
import type { DatasetFormat } from '../module';
import { modelFamily, type ModelFamily } from './models';

interface Turn {
  role: 'user' | 'assistant';
  text: string;
}

interface Conversation {
  system: string[];
  turns: Turn[];
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A message's text: a string, or OpenAI's text parts joined. */
function textOf(content: unknown, at: string): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content) && content.every((part) => isRecord(part) && part.type === 'text' && typeof part.text === 'string')) {
    return content.map((part: { text: string }) => part.text).join('');
  }
  throw new DatasetLineError(`${at}.content must be text (a string or text parts)`);
}

function turnOf(message: Record<string, unknown>, at: string, previous: Turn | undefined): Turn {
  const role = message.role;
  if (role !== 'user' && role !== 'assistant') {
    throw new DatasetLineError(`${at}: the role '${String(role)}' has no Bedrock equivalent (system, user and assistant do)`);
  }
  if (role === (previous?.role ?? 'assistant')) {
    throw new DatasetLineError(`${at}: Bedrock needs user and assistant messages to alternate, starting with user`);
  }
  return { role, text: textOf(message.content, at) };
}

function conversationOf(example: unknown): Conversation {
  if (!isRecord(example) || !Array.isArray(example.messages)) throw new DatasetLineError('expected an object with a "messages" array');
  const conversation: Conversation = { system: [], turns: [] };
  example.messages.forEach((message: unknown, i) => {
    const at = `messages[${i}]`;
    if (!isRecord(message)) throw new DatasetLineError(`${at} is not an object`);
    if (message.tool_calls !== undefined || message.function_call !== undefined) throw new DatasetLineError(`${at}: tool calls cannot be converted`);
    if (message.role === 'system' || message.role === 'developer') {
      if (conversation.turns.length > 0) throw new DatasetLineError(`${at}: a system message after the conversation started cannot be converted`);
      conversation.system.push(textOf(message.content, at));
      return;
    }
    conversation.turns.push(turnOf(message, at, conversation.turns.at(-1)));
  });
  if (conversation.turns.at(-1)?.role !== 'assistant') throw new DatasetLineError('the conversation must end with an assistant message');
  return conversation;
}

const toConverse = ({ system, turns }: Conversation) => ({
  schemaVersion: 'bedrock-conversation-2024',
  ...(system.length ? { system: system.map((text) => ({ text })) } : {}),
  messages: turns.map(({ role, text }) => ({ role, content: [{ text }] })),
});

const toClaude = ({ system, turns }: Conversation) => ({
  ...(system.length ? { system: system.join('\n') } : {}),
  messages: turns.map(({ role, text }) => ({ role, content: text })),
});

function toPromptCompletion({ system, turns }: Conversation) {
  const [prompt, completion] = turns;
  if (turns.length !== 2) throw new DatasetLineError('text models take one exchange per example: a single user message and the assistant answer');
  return { prompt: [...system, prompt.text].join('\n\n'), completion: completion.text };
}

const CONVERTERS: Readonly<Record<ModelFamily, (c: Conversation) => unknown>> = { nova: toConverse, claude: toClaude, text: toPromptCompletion };

export const bedrockDataset: DatasetFormat = {
  converter(model) {
    const convert = CONVERTERS[modelFamily(model)];
    return (example) => convert(conversationOf(example));
  },
};
