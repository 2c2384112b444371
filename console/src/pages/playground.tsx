import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, rest, streamChat, type ChatDelta } from '../api';
import {
  NO_FORMAT,
  answerToolCalls,
  chatBody,
  prettyJson,
  withToolCallDeltas,
  type FormatDraft,
  type Message,
  type ToolCall,
  type ToolChoice,
  type ToolDraft,
} from '../chat-request';
import { expandPartials, partialSlugs } from '../partial-refs';
import { ErrorNote, Page, useLoad } from '../ui';
import { FormatEditor, ToolsEditor } from './playground-options';

type Source = 'hosted' | 'provider';

async function loadChoices() {
  const [models, integrations] = await Promise.all([
    rest<{ data: { id: string }[] }>('GET', '/models').catch(() => ({ data: [] })),
    rest<{ data: { slug: string; provider: string }[] }>('GET', '/integrations'),
  ]);
  return { models: models.data.map((m) => m.id), integrations: integrations.data };
}

/** The texts of the partials the messages reference (default versions), fetched once per slug. */
function usePartialTexts(messages: Message[]) {
  const [texts, setTexts] = useState<Map<string, string>>(new Map());
  const [missing, setMissing] = useState<string[]>([]);
  const slugs = messages.flatMap((m) => partialSlugs(m.content));
  const key = [...new Set(slugs)].sort().join(' ');
  useEffect(() => {
    const wanted = key ? key.split(' ').filter((slug) => !texts.has(slug)) : [];
    if (wanted.length === 0) return;
    let live = true;
    // Waits for typing to pause before asking the gateway.
    const timer = setTimeout(() => {
      void Promise.all(
        wanted.map((slug) =>
          rest<{ string: string }>('GET', `/prompts/partials/${encodeURIComponent(slug)}`).then(
            (p) => [slug, p.string] as const,
            (err: unknown) => [slug, err instanceof ApiError && err.status === 404 ? null : undefined] as const,
          ),
        ),
      ).then((found) => {
        if (!live) return;
        setTexts((old) => new Map([...old, ...found.filter((f): f is readonly [string, string] => typeof f[1] === 'string')]));
        setMissing(found.filter(([, text]) => text === null).map(([slug]) => slug));
      });
    }, 300);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [key]);
  return { texts, missing: missing.filter((slug) => slugs.includes(slug)) };
}

interface Target {
  source: Source;
  /** A fine-tuned model (hosted source). */
  model: string;
  /** An integration slug and the provider's model id (provider source, client mode). */
  integration: string;
  providerModel: string;
}

type Choices = Awaited<ReturnType<typeof loadChoices>>;

/** The model and the headers a chat call takes for the chosen target ('' when nothing can be chosen yet). */
function resolveTarget(target: Target, choices: Choices | undefined): { model: string; headers: Record<string, string> } {
  if (target.source === 'hosted') return { model: target.model || choices?.models[0] || '', headers: {} };
  const slug = target.integration || choices?.integrations[0]?.slug;
  return { model: slug ? target.providerModel : '', headers: slug ? { 'x-gateway-provider': `@${slug}` } : {} };
}

interface Answer {
  text: string;
  toolCalls: ToolCall[];
}

const NO_ANSWER: Answer = { text: '', toolCalls: [] };

const withDelta = (answer: Answer, delta: ChatDelta): Answer => ({
  text: answer.text + (delta.content ?? ''),
  toolCalls: delta.tool_calls ? withToolCallDeltas(answer.toolCalls, delta.tool_calls) : answer.toolCalls,
});

export function PlaygroundPage({ model: initialModel }: { model?: string }) {
  const choices = useLoad(loadChoices, []);
  const [target, setTarget] = useState<Target>({ source: 'hosted', model: initialModel ?? '', integration: '', providerModel: 'gpt-4o-mini' });
  const [messages, setMessages] = useState<Message[]>([{ role: 'user', content: '' }]);
  const [tools, setTools] = useState<ToolDraft[]>([]);
  const [toolChoice, setToolChoice] = useState<ToolChoice>('auto');
  const [format, setFormat] = useState<FormatDraft>(NO_FORMAT);
  const [answer, setAnswer] = useState<Answer>(NO_ANSWER);
  const [error, setError] = useState<unknown>(null);
  const [streaming, setStreaming] = useState(false);
  const abort = useRef<AbortController | null>(null);
  const chosen = resolveTarget(target, choices.data);

  const send = async (event: Event) => {
    event.preventDefault();
    setAnswer(NO_ANSWER);
    setError(null);
    setStreaming(true);
    abort.current = new AbortController();
    try {
      const body = chatBody(chosen.model, messages, tools, toolChoice, format);
      await streamChat(body, chosen.headers, (delta) => setAnswer((a) => withDelta(a, delta)), abort.current.signal);
    } catch (err) {
      if (!(err instanceof DOMException && err.name === 'AbortError')) setError(err);
    } finally {
      setStreaming(false);
    }
  };
  // The model's calls join the conversation with an empty result each, for the user to fill in and send.
  const answerCalls = () => {
    setMessages((all) => answerToolCalls(all, answer.text, answer.toolCalls));
    setAnswer(NO_ANSWER);
  };

  return (
    <Page title="Playground">
      <ErrorNote error={choices.error} />
      <form class="playground" onSubmit={send}>
        <ModelPicker target={target} onChange={(change) => setTarget((t) => ({ ...t, ...change }))} choices={choices.data} extraModel={initialModel} />
        <MessagesEditor messages={messages} setMessages={setMessages} />
        <ToolsEditor tools={tools} setTools={setTools} choice={toolChoice} setChoice={setToolChoice} />
        <FormatEditor format={format} setFormat={setFormat} />
        <div class="actions">
          <button type="submit" disabled={streaming || !chosen.model}>
            Send
          </button>
          {streaming && (
            <button type="button" class="secondary" onClick={() => abort.current?.abort()}>
              Stop
            </button>
          )}
        </div>
      </form>
      <h2>Answer</h2>
      <ErrorNote error={error} />
      <output class="answer" aria-live="polite" aria-busy={streaming} data-testid="answer">
        {answer.text}
      </output>
      {!streaming && format.type !== 'text' && answer.text && <JsonCheck text={answer.text} />}
      {answer.toolCalls.length > 0 && <ToolCalls calls={answer.toolCalls} done={!streaming} onAnswer={answerCalls} />}
    </Page>
  );
}

/** JSON mode: the answer parsed and shown indented, or said not to be JSON. */
function JsonCheck({ text }: { text: string }) {
  const pretty = prettyJson(text);
  if (pretty === null) return <p class="error">The answer is not valid JSON.</p>;
  return (
    <div class="preview" data-testid="answer-json">
      <span class="muted">Valid JSON</span>
      <pre>{pretty}</pre>
    </div>
  );
}

function ToolCalls({ calls, done, onAnswer }: { calls: ToolCall[]; done: boolean; onAnswer: () => void }) {
  return (
    <>
      <h3>Tool calls</h3>
      <ol class="tool-calls" data-testid="tool-calls">
        {calls.map((c) => (
          <li key={c.id}>
            <code>{c.name}</code> <span class="muted">{c.id}</span>
            <pre>{prettyJson(c.arguments) ?? c.arguments}</pre>
          </li>
        ))}
      </ol>
      {done && (
        <button type="button" onClick={onAnswer}>
          Answer the tool calls
        </button>
      )}
    </>
  );
}

interface PickerProps {
  target: Target;
  onChange: (change: Partial<Target>) => void;
  choices: Choices | undefined;
  /** A model named in the page's address (a job page's link), listed even before /v1/models has it. */
  extraModel: string | undefined;
}

function ModelPicker({ target, onChange, choices, extraModel }: PickerProps) {
  const models = [...new Set([...(extraModel ? [extraModel] : []), ...(choices?.models ?? [])])];
  const integrations = choices?.integrations ?? [];
  const chosen = resolveTarget(target, choices);
  return (
    <fieldset class="panel">
      <legend>Model</legend>
      <label class="inline">
        <input type="radio" name="source" checked={target.source === 'hosted'} onChange={() => onChange({ source: 'hosted' })} /> A fine-tuned model of this
        workspace
      </label>
      <label class="inline">
        <input type="radio" name="source" checked={target.source === 'provider'} onChange={() => onChange({ source: 'provider' })} /> A provider's model through
        an integration
      </label>
      {target.source === 'hosted' ? (
        <div class="grid-form">
          <label for="pg-model">Model</label>
          <select id="pg-model" value={chosen.model} onChange={(e) => onChange({ model: e.currentTarget.value })}>
            {models.map((id) => (
              <option key={id} value={id}>
                {id}
              </option>
            ))}
          </select>
          {choices && models.length === 0 && <p class="hint">No fine-tuned model yet: a succeeded job adds one.</p>}
        </div>
      ) : (
        <div class="grid-form">
          <label for="pg-integration">Integration</label>
          <select id="pg-integration" value={target.integration || integrations[0]?.slug} onChange={(e) => onChange({ integration: e.currentTarget.value })}>
            {integrations.map((i) => (
              <option key={i.slug} value={i.slug}>
                @{i.slug} ({i.provider})
              </option>
            ))}
          </select>
          <label for="pg-provider-model">Provider's model id</label>
          <input id="pg-provider-model" value={target.providerModel} onInput={(e) => onChange({ providerModel: e.currentTarget.value })} />
        </div>
      )}
    </fieldset>
  );
}

function MessagesEditor({ messages, setMessages }: { messages: Message[]; setMessages: (update: (all: Message[]) => Message[]) => void }) {
  const partials = usePartialTexts(messages);
  const update = (index: number, change: Partial<Message>) => setMessages((all) => all.map((m, i) => (i === index ? { ...m, ...change } : m)));
  return (
    <fieldset class="panel">
      <legend>Messages</legend>
      <p class="hint">
        Write <code>{'{{>slug}}'}</code> to insert a prompt partial's default version; the preview shows the text the model will get.
      </p>
      {messages.map((message, i) => (
        <div class="message" key={i}>
          {message.role === 'tool' || message.toolCalls?.length ? (
            <ToolTurn message={message} index={i} onInput={(content) => update(i, { content })} />
          ) : (
            <TextTurn message={message} index={i} onChange={(change) => update(i, change)} preview={partials.texts} />
          )}
          {messages.length > 1 && (
            <button type="button" class="secondary" onClick={() => setMessages((all) => all.filter((_, j) => j !== i))}>
              Remove message {i + 1}
            </button>
          )}
        </div>
      ))}
      {partials.missing.length > 0 && (
        <p class="error" role="alert">
          Unknown partial: {partials.missing.join(', ')}
        </p>
      )}
      <button type="button" class="secondary" onClick={() => setMessages((all) => [...all, { role: 'user', content: '' }])}>
        Add message
      </button>
    </fieldset>
  );
}

interface TextTurnProps {
  message: Message;
  index: number;
  onChange: (change: Partial<Message>) => void;
  preview: Map<string, string>;
}

function TextTurn({ message, index: i, onChange, preview }: TextTurnProps) {
  return (
    <>
      <label for={`role-${i}`}>Role of message {i + 1}</label>
      <select id={`role-${i}`} value={message.role} onChange={(e) => onChange({ role: e.currentTarget.value as Message['role'] })}>
        <option value="system">system</option>
        <option value="user">user</option>
        <option value="assistant">assistant</option>
      </select>
      <label for={`content-${i}`}>Text of message {i + 1}</label>
      <textarea id={`content-${i}`} rows={3} required value={message.content} onInput={(e) => onChange({ content: e.currentTarget.value })} />
      {partialSlugs(message.content).length > 0 && (
        <div class="preview" aria-label={`Preview of message ${i + 1}`}>
          <span class="muted">Preview</span>
          <pre>{expandPartials(message.content, preview)}</pre>
        </div>
      )}
    </>
  );
}

/** The model's tool calls (read only), or a tool result the user types. */
function ToolTurn({ message, index: i, onInput }: { message: Message; index: number; onInput: (content: string) => void }) {
  if (message.role !== 'tool') {
    return (
      <div class="preview" aria-label={`Message ${i + 1}: the model's tool calls`}>
        <span class="muted">Message {i + 1}: assistant, calling tools</span>
        <pre>{message.toolCalls?.map((c) => `${c.name}(${c.arguments})  ${c.id}`).join('\n')}</pre>
      </div>
    );
  }
  return (
    <>
      <label for={`content-${i}`}>
        Result of {message.toolName} ({message.toolCallId}), message {i + 1}
      </label>
      <textarea id={`content-${i}`} rows={2} required value={message.content} onInput={(e) => onInput(e.currentTarget.value)} />
    </>
  );
}
