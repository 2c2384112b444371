/**
 * What the providers' dataset validators find in an uploaded JSONL file, for the fakes that validate
 * datasets the way their provider does (Fireworks at `:validateUpload`, Together in `processing_status`):
 * one JSON object per line, all lines of one shape, the first bad line named.
 */

/** The example shapes fine-tuning providers accept. */
export type JsonlShape = 'chat' | 'completion' | 'text';

export interface JsonlReport {
  /** Non-empty lines: each is one example. */
  examples: number;
  /** The shape of the examples; null when there are none or the file is invalid. */
  shape: JsonlShape | null;
  /** Rough token count (4 characters a token), for the fields providers report. */
  estimatedTokens: number;
  /** Chat examples: average number of messages. */
  averageTurns: number;
  /** The first problem, with its 1-based line number. */
  error?: { line: number; message: string };
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);

/** The shape of one example, or why it is none of them. */
function shapeOf(example: Record<string, unknown>): string {
  if ('messages' in example) {
    const messages = example.messages;
    if (!Array.isArray(messages) || messages.length === 0) return '"messages" must be a non-empty array';
    for (const message of messages) {
      if (!isObject(message) || typeof message.role !== 'string' || !ROLES.has(message.role)) {
        return 'every message needs a role of system, user, assistant or tool';
      }
      if (message.content === undefined && message.tool_calls === undefined) return 'every message needs a "content"';
    }
    if (!messages.some((m) => (m as { role: string }).role === 'assistant')) return 'an example needs at least one assistant message';
    return 'chat';
  }
  if (typeof example.prompt === 'string' && typeof example.completion === 'string') return 'completion';
  if (typeof example.text === 'string') return 'text';
  return 'unrecognised example: expected "messages", "prompt" and "completion", or "text"';
}

export function inspectJsonl(content: Buffer): JsonlReport {
  const report: JsonlReport = { examples: 0, shape: null, estimatedTokens: 0, averageTurns: 0 };
  let turns = 0;
  let shape: JsonlShape | null = null;
  const lines = content.toString('utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    let example: unknown;
    try {
      example = JSON.parse(line);
    } catch {
      return { ...report, shape: null, error: { line: i + 1, message: 'not valid JSON' } };
    }
    const found = isObject(example) ? shapeOf(example) : 'each line must be a JSON object';
    if (found !== 'chat' && found !== 'completion' && found !== 'text') return { ...report, shape: null, error: { line: i + 1, message: found } };
    if (shape && found !== shape) return { ...report, shape: null, error: { line: i + 1, message: `expected a ${shape} example like the lines before` } };
    shape = found;
    report.examples++;
    report.estimatedTokens += Math.ceil(line.length / 4);
    if (found === 'chat') turns += (example as { messages: unknown[] }).messages.length;
  }
  return { ...report, shape, averageTurns: report.examples ? turns / report.examples : 0 };
}
