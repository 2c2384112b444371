import { TextDecoder } from 'node:util';
import { badRequest } from '../../errors';
import { formatByteSize } from '../../storage/file-store';

/**
 * Streaming validation of fine-tune datasets (JSON Lines), with the checks OpenAI applies on
 * upload. Bytes are fed in as they arrive; only the line being read is ever held in memory.
 */

export interface DatasetError {
  /** 1-based; blank lines count. */
  line: number;
  reason: string;
}

export interface DatasetReport {
  /** Lines that hold a valid training example. */
  examples: number;
  /** The first few problems, in line order (at most `maxReportedErrors`). */
  errors: DatasetError[];
  /** Every line with a problem, including those left out of `errors`. */
  errorCount: number;
  /** The minimum the validator was configured with, so the report can be judged on its own. */
  minExamples: number;
}

export interface DatasetValidatorOptions {
  minExamples?: number;
  maxReportedErrors?: number;
  maxLineBytes?: number;
}

export interface DatasetValidator {
  write(chunk: Buffer): void;
  finish(): DatasetReport;
}

export const DEFAULT_MIN_EXAMPLES = 10;
export const DEFAULT_MAX_REPORTED_ERRORS = 5;
export const DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024;

const NEWLINE = 0x0a;
const BOM = '\ufeff';

export function createDatasetValidator(opts: DatasetValidatorOptions = {}): DatasetValidator {
  const sink = new DatasetSink(opts.minExamples ?? DEFAULT_MIN_EXAMPLES, opts.maxReportedErrors ?? DEFAULT_MAX_REPORTED_ERRORS);
  const scanner = new JsonlScanner([sink], opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
  return {
    write: (chunk) => scanner.write(chunk),
    finish: () => {
      scanner.finish();
      return sink.report();
    },
  };
}

/**
 * A check of an upload's content for one purpose, fed its lines while they stream in; `verdict`
 * throws the 400 for content unusable for that purpose (`bytes`: the file's size).
 */
export interface ContentCheck extends LineSink {
  verdict(bytes: number): void;
}

/** The fine-tune dataset check as FileService runs it on uploads. */
export function createDatasetCheck(): ContentCheck {
  const sink = new DatasetSink(DEFAULT_MIN_EXAMPLES, DEFAULT_MAX_REPORTED_ERRORS);
  return {
    value: (line, value) => sink.value(line, value),
    problem: (line, reason) => sink.problem(line, reason),
    verdict: () => assertValidDataset(sink.report()),
  };
}

/** Throws the 400 a client sees for an unusable dataset; returns quietly for a good one. */
export function assertValidDataset(report: DatasetReport): void {
  if (report.errors.length > 0) {
    throw badRequest(`Invalid fine-tune dataset: ${listLineErrors(report.errors, report.errorCount)}`, 'file', 'invalid_dataset');
  }
  if (report.examples < report.minExamples) {
    throw badRequest(
      `Invalid fine-tune dataset: the file has ${report.examples} ${report.examples === 1 ? 'example' : 'examples'}; ` +
        `at least ${report.minExamples} are required`,
      'file',
      'invalid_dataset',
    );
  }
}

/** `line 3: invalid JSON; line 7: …` and how many more lines have errors. */
export function listLineErrors(errors: readonly DatasetError[], errorCount: number): string {
  const listed = errors.map((e) => `line ${e.line}: ${e.reason}`).join('; ');
  const unlisted = errorCount - errors.length;
  return unlisted > 0 ? `${listed} (and ${unlisted} more ${unlisted === 1 ? 'line' : 'lines'} with errors)` : listed;
}

/** What a JSON Lines check is told of each line: its value, or why it has none (blank lines are skipped). */
export interface LineSink {
  value(line: number, value: unknown): void;
  problem(line: number, reason: string): void;
}

/**
 * Splits JSON Lines as the bytes arrive and parses each line once, for every sink: several checks
 * (an upload whose purpose is not known yet) cost one parse. Only the line being read is held.
 */
export class JsonlScanner {
  /** Number of the line currently being read. */
  private line = 1;
  private lineBytes = 0;
  private linePieces: string[] = [];
  private lineTooLong = false;
  // Lines are split on raw '\n' bytes, which never occur inside a multi-byte UTF-8 sequence, and
  // the streaming decoder is flushed at each line's end: it reassembles characters split across
  // chunks and pins invalid UTF-8 to the line it occurs on. BOMs are ours to handle, hence ignoreBOM.
  private decoder = newDecoder();

  /** Set on invalid UTF-8: once the encoding is wrong, later complaints would only be noise. */
  private stopped = false;
  private finished = false;

  constructor(
    private readonly sinks: readonly LineSink[],
    private readonly maxLineBytes = DEFAULT_MAX_LINE_BYTES,
  ) {}

  write(chunk: Buffer): void {
    if (this.finished) throw new Error('JSONL scanner: write() after finish()');
    let start = 0;
    while (!this.stopped && start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      this.appendToLine(chunk.subarray(start, end));
      if (newline === -1) return;
      this.endLine();
      start = newline + 1;
    }
  }

  finish(): void {
    if (this.finished) return;
    // A final line without a trailing newline still counts; an empty tail after one does not.
    if (!this.stopped && (this.lineBytes > 0 || this.lineTooLong)) this.endLine();
    this.finished = true;
  }

  private appendToLine(bytes: Buffer): void {
    if (this.lineTooLong || bytes.length === 0) return;
    this.lineBytes += bytes.length;
    if (this.lineBytes > this.maxLineBytes) {
      // Drop what we have and skip to the next newline: the cap is what bounds our memory.
      this.lineTooLong = true;
      this.linePieces = [];
      this.decoder = newDecoder();
      return;
    }
    try {
      this.linePieces.push(this.decoder.decode(bytes, { stream: true }));
    } catch {
      this.failEncoding();
    }
  }

  private endLine(): void {
    if (this.lineTooLong) {
      this.report(`line is longer than ${formatByteSize(this.maxLineBytes)}`);
    } else {
      let tail: string;
      try {
        tail = this.decoder.decode(); // flush: a sequence cut short by the newline is invalid
      } catch {
        this.failEncoding();
        return;
      }
      this.checkLine(this.linePieces.join('') + tail);
    }
    this.line += 1;
    this.lineBytes = 0;
    this.linePieces = [];
    this.lineTooLong = false;
  }

  private checkLine(raw: string): void {
    let text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (this.line === 1 && text.startsWith(BOM)) text = text.slice(1);
    if (text.trim() === '') return;

    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.report('invalid JSON');
      return;
    }
    for (const sink of this.sinks) sink.value(this.line, value);
  }

  private failEncoding(): void {
    this.report('invalid UTF-8');
    this.stopped = true;
    this.linePieces = [];
  }

  private report(reason: string): void {
    for (const sink of this.sinks) sink.problem(this.line, reason);
  }
}

/** The fine-tune dataset check: counts examples, keeps the first few problems. */
class DatasetSink implements LineSink {
  private readonly errors: DatasetError[] = [];
  private errorCount = 0;
  private examples = 0;

  constructor(
    private readonly minExamples: number,
    private readonly maxReportedErrors: number,
  ) {}

  value(line: number, value: unknown): void {
    const problem = checkExample(value);
    if (problem === null) this.examples += 1;
    else this.problem(line, problem);
  }

  problem(line: number, reason: string): void {
    this.errorCount += 1;
    if (this.errors.length < this.maxReportedErrors) this.errors.push({ line, reason });
  }

  report(): DatasetReport {
    return { examples: this.examples, errors: [...this.errors], errorCount: this.errorCount, minExamples: this.minExamples };
  }
}

function newDecoder(): TextDecoder {
  return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
}

// ---------------------------------------------------------------------------------------------
// Example checks. Each returns the first problem as a short reason, or null when the value is fine.

type Json = Record<string, unknown>;

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Chat examples carry `messages`; preference (DPO) examples carry `input` and two outputs. */
function checkExample(value: unknown): string | null {
  if (!isObject(value)) return 'expected a JSON object';
  if ('messages' in value) return checkChatExample(value);
  if ('input' in value || 'preferred_output' in value || 'non_preferred_output' in value) {
    return checkPreferenceExample(value);
  }
  return 'missing "messages" array';
}

function checkChatExample(example: Json): string | null {
  const messages = example.messages;
  if (!Array.isArray(messages)) return 'missing "messages" array';
  return checkMessages(messages, { list: 'messages', prefix: '', needsAssistant: true });
}

function checkPreferenceExample(example: Json): string | null {
  const input = example.input;
  if (!isObject(input) || !Array.isArray(input.messages)) return 'missing "input.messages" array';
  return (
    checkMessages(input.messages, { list: 'input.messages', prefix: 'input ', needsAssistant: false }) ??
    checkOutput(example.preferred_output, 'preferred_output') ??
    checkOutput(example.non_preferred_output, 'non_preferred_output')
  );
}

function checkOutput(output: unknown, name: string): string | null {
  if (!Array.isArray(output)) return `missing "${name}" array`;
  return checkMessages(output, { list: name, prefix: `${name} `, needsAssistant: true });
}

interface MessageListSpec {
  /** How the list is named in reasons about the list as a whole. */
  list: string;
  /** Put before "message N" so a preference example says which of its lists is wrong. */
  prefix: string;
  needsAssistant: boolean;
}

function checkMessages(messages: unknown[], spec: MessageListSpec): string | null {
  if (messages.length === 0) return `"${spec.list}" is empty`;
  for (const [index, message] of messages.entries()) {
    const problem = checkMessage(message);
    if (problem !== null) return `${spec.prefix}message ${index + 1} ${problem}`;
  }
  if (spec.needsAssistant && !messages.some((m) => isObject(m) && m.role === 'assistant')) {
    return spec.list === 'messages' ? 'no assistant message' : `no assistant message in "${spec.list}"`;
  }
  return null;
}

/** The reason reads after "message N", e.g. `has invalid role "bot"`. */
function checkMessage(message: unknown): string | null {
  if (!isObject(message)) return 'is not an object';
  const role = message.role;
  if (role === undefined) return 'is missing "role"';
  if (typeof role !== 'string' || !ROLES.has(role)) return `has invalid role ${JSON.stringify(role)}`;
  const contentProblem = checkContent(message);
  if (contentProblem !== null) return contentProblem;
  if ('weight' in message && message.weight !== 0 && message.weight !== 1) {
    return 'has invalid "weight" (must be 0 or 1)';
  }
  return null;
}

function checkContent(message: Json): string | null {
  const content = message.content;
  if (typeof content === 'string') return null;
  if (Array.isArray(content)) {
    if (content.length === 0) return 'has empty "content"';
    const bad = content.findIndex((part) => !isObject(part) || typeof part.type !== 'string');
    return bad === -1 ? null : `has invalid content part ${bad + 1}`;
  }
  // An assistant turn that only calls tools legitimately has no text.
  const callsTools = Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
  if ((content === null || content === undefined) && message.role === 'assistant' && callsTools) return null;
  return content === undefined ? 'is missing "content"' : 'has invalid "content"';
}
