/** The playground's request options beyond the messages: function tools with a tool choice, and the response format. */
import type { FormatDraft, ToolChoice, ToolDraft } from '../chat-request';

const EXAMPLE_TOOL: ToolDraft = {
  name: 'get_weather',
  description: 'The current weather of a city',
  parameters: JSON.stringify({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, null, 2),
};

interface ToolsProps {
  tools: ToolDraft[];
  setTools: (update: (all: ToolDraft[]) => ToolDraft[]) => void;
  choice: ToolChoice;
  setChoice: (choice: ToolChoice) => void;
}

export function ToolsEditor({ tools, setTools, choice, setChoice }: ToolsProps) {
  const update = (index: number, change: Partial<ToolDraft>) => setTools((all) => all.map((t, i) => (i === index ? { ...t, ...change } : t)));
  return (
    <fieldset class="panel">
      <legend>Tools</legend>
      <p class="hint">Function tools the model may call; answer its calls with their results and send again.</p>
      {tools.map((tool, i) => (
        <div class="message" key={i}>
          <label for={`tool-name-${i}`}>Name of tool {i + 1}</label>
          <input id={`tool-name-${i}`} required value={tool.name} onInput={(e) => update(i, { name: e.currentTarget.value })} />
          <label for={`tool-description-${i}`}>Description of tool {i + 1}</label>
          <input id={`tool-description-${i}`} value={tool.description} onInput={(e) => update(i, { description: e.currentTarget.value })} />
          <label for={`tool-parameters-${i}`}>Parameters of tool {i + 1} (JSON Schema)</label>
          <textarea
            id={`tool-parameters-${i}`}
            rows={5}
            class="code"
            value={tool.parameters}
            onInput={(e) => update(i, { parameters: e.currentTarget.value })}
          />
          <button type="button" class="secondary" onClick={() => setTools((all) => all.filter((_, j) => j !== i))}>
            Remove tool {i + 1}
          </button>
        </div>
      ))}
      <button
        type="button"
        class="secondary"
        onClick={() => setTools((all) => [...all, { ...EXAMPLE_TOOL, name: all.length ? `tool_${all.length + 1}` : EXAMPLE_TOOL.name }])}
      >
        Add a function tool
      </button>
      {tools.length > 0 && (
        <div class="grid-form">
          <label for="tool-choice">Tool choice</label>
          <select id="tool-choice" value={choice} onChange={(e) => setChoice(e.currentTarget.value)}>
            <option value="auto">auto: the model decides</option>
            <option value="required">required: some tool</option>
            <option value="none">none: no tool</option>
            {tools
              .filter((t) => t.name.trim())
              .map((t) => (
                <option key={t.name} value={`function:${t.name.trim()}`}>
                  {t.name.trim()}
                </option>
              ))}
          </select>
        </div>
      )}
    </fieldset>
  );
}

export function FormatEditor({ format, setFormat }: { format: FormatDraft; setFormat: (update: (f: FormatDraft) => FormatDraft) => void }) {
  const change = (update: Partial<FormatDraft>) => setFormat((f) => ({ ...f, ...update }));
  return (
    <fieldset class="panel">
      <legend>Response format</legend>
      <div class="grid-form">
        <label for="response-format">JSON mode</label>
        <select id="response-format" value={format.type} onChange={(e) => change({ type: e.currentTarget.value as FormatDraft['type'] })}>
          <option value="text">Off: text</option>
          <option value="json_object">JSON object (json_object)</option>
          <option value="json_schema">JSON following a schema (json_schema)</option>
        </select>
        {format.type === 'json_object' && <p class="hint">OpenAI asks for the word "JSON" in the messages in this mode.</p>}
        {format.type === 'json_schema' && (
          <>
            <label for="schema-name">Schema name</label>
            <input id="schema-name" required value={format.name} onInput={(e) => change({ name: e.currentTarget.value })} />
            <label for="schema-text">Schema (JSON Schema)</label>
            <textarea id="schema-text" rows={6} class="code" value={format.schema} onInput={(e) => change({ schema: e.currentTarget.value })} />
            <label for="schema-strict">Strict</label>
            <input id="schema-strict" type="checkbox" checked={format.strict} onChange={(e) => change({ strict: e.currentTarget.checked })} />
          </>
        )}
      </div>
    </fieldset>
  );
}
