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
  const inspector = new JsonlInspector();
  inspector.write(content);
  return inspector.finish();
}

/**
 * The same inspection fed chunk by chunk, holding only the line being read: a fake receiving a large
 * upload (Fireworks' signed-URL bucket) validates it without keeping the bytes.
 */
export class JsonlInspector {
  private readonly report: JsonlReport = { examples: 0, shape: null, estimatedTokens: 0, averageTurns: 0 };
  private turns = 0;
  private lineNumber = 0;
  private pending: Buffer = Buffer.alloc(0);
  private error: JsonlReport['error'];

  write(chunk: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    let newline: number;
    while ((newline = this.pending.indexOf(0x0a)) >= 0) {
      this.line(this.pending.subarray(0, newline));
      this.pending = this.pending.subarray(newline + 1);
    }
  }

  finish(): JsonlReport {
    this.line(this.pending);
    this.pending = Buffer.alloc(0);
    if (this.error) return { ...this.report, shape: null, error: this.error };
    return { ...this.report, averageTurns: this.report.examples ? this.turns / this.report.examples : 0 };
  }

  /** One line (the first problem stops the inspection; the lines after it are only counted). */
  private line(bytes: Buffer): void {
    this.lineNumber++;
    const line = bytes.toString('utf8').trim();
    if (this.error || !line) return;
    let example: unknown;
    try {
      example = JSON.parse(line);
    } catch {
      this.error = { line: this.lineNumber, message: 'not valid JSON' };
      return;
    }
    const found = isObject(example) ? shapeOf(example) : 'each line must be a JSON object';
    if (found !== 'chat' && found !== 'completion' && found !== 'text') {
      this.error = { line: this.lineNumber, message: found };
    } else if (this.report.shape && found !== this.report.shape) {
      this.error = { line: this.lineNumber, message: `expected a ${this.report.shape} example like the lines before` };
    } else {
      this.report.shape = found;
      this.report.examples++;
      this.report.estimatedTokens += Math.ceil(line.length / 4);
      if (found === 'chat') this.turns += (example as { messages: unknown[] }).messages.length;
    }
  }
}
