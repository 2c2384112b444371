/**
 * Batch input files (OpenAI's `BatchRequestInput` lines): checked line by line while an upload with
 * purpose `batch` streams in, and read back line by line when the batch runner loads a batch.
 */
import { Readable } from 'node:stream';
import { badRequest, GatewayError } from '../../errors';
import { restPath } from '../../http/case';
import { formatByteSize } from '../../storage/file-store';
import { parseInput, untrustedInput } from '../../validation/parse';
import { chatCompletionSchema } from '../chat/chat.schemas';
import { DEFAULT_MAX_REPORTED_ERRORS, JsonlScanner, listLineErrors, type ContentCheck, type DatasetError, type LineSink } from '../files/dataset-validator';
import type { BatchInputLimits } from '../../providers/batch';
import { BATCH_ENDPOINT, MAX_BATCH_BYTES, MAX_BATCH_REQUESTS } from './batch.schemas';

/** One request of a batch file, as the runner sends it. */
export interface BatchRequestLine {
  line: number;
  customId: string;
  /** The chat request body as written in the file (snake_case). */
  body: Record<string, unknown>;
}

const FIELDS = new Set(['custom_id', 'method', 'url', 'body']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The request on a line, or the first reason it is not one (uniqueness and the model are the file's checks). */
function parseRequest(line: number, value: unknown): BatchRequestLine | string {
  if (!isObject(value)) return 'expected a JSON object';
  const unknown = Object.keys(value).find((key) => !FIELDS.has(key));
  if (unknown !== undefined) return `"${unknown}" is not a known field (a line holds custom_id, method, url and body)`;
  const { custom_id: customId, method, url, body } = value;
  if (typeof customId !== 'string' || customId === '') return '"custom_id" must be a non-empty string';
  if (method !== 'POST') return '"method" must be "POST"';
  if (url !== BATCH_ENDPOINT) return `"url" must be "${BATCH_ENDPOINT}"`;
  if (!isObject(body)) return '"body" must be a chat completion request object';
  const problem = chatRequestProblem(body);
  return problem ?? { line, customId, body };
}

/** The chat route's own validation of the body, its complaint spelled as a REST caller would see it. */
function chatRequestProblem(body: Record<string, unknown>): string | null {
  try {
    const request = parseInput(chatCompletionSchema, untrustedInput(body));
    if (request.stream) return '"body.stream" must not be true: a batch answers each request whole';
    return null;
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    const { param, message } = err.render(restPath);
    if (param === null) return `body: ${message}`;
    return err.aboutField ? `body.${message}` : `body.${param}: ${message}`;
  }
}

/** What the upload check keeps: one entry per custom_id, so memory is bounded by the request cap. */
class BatchFileCheck implements ContentCheck {
  private readonly errors: DatasetError[] = [];
  private errorCount = 0;
  private requests = 0;
  private readonly ids = new Map<string, number>();
  private model: { name: string; line: number } | null = null;
  private readonly fields = new Set<string>();

  constructor(private readonly limits: Required<BatchInputLimits> = OPENAI_LIMITS) {}

  value(line: number, value: unknown): void {
    const max = this.limits.maxRequests;
    if (this.requests > max) return;
    this.requests += 1;
    if (this.requests > max) return this.problem(line, `the file holds more than ${max} requests`);
    const request = parseRequest(line, value);
    if (typeof request === 'string') return this.problem(line, request);
    const first = this.ids.get(request.customId);
    if (first !== undefined) return this.problem(line, `custom_id ${JSON.stringify(request.customId)} is also on line ${first}`);
    this.ids.set(request.customId, line);
    addFields(this.fields, request.body);
    const model = String(request.body.model);
    if (this.model === null) this.model = { name: model, line };
    else if (model !== this.model.name)
      this.problem(line, `body.model ${JSON.stringify(model)} differs from ${JSON.stringify(this.model.name)} on line ${this.model.line} (one model per file)`);
  }

  problem(line: number, reason: string): void {
    this.errorCount += 1;
    if (this.errors.length < DEFAULT_MAX_REPORTED_ERRORS) this.errors.push({ line, reason });
  }

  verdict(bytes: number): void {
    const { maxBytes, minRequests } = this.limits;
    if (bytes > maxBytes) throw invalidFile(`the file is ${formatByteSize(bytes)}; a batch file may hold at most ${formatByteSize(maxBytes)}`);
    if (this.errors.length > 0) throw invalidFile(listLineErrors(this.errors, this.errorCount));
    if (this.requests === 0) throw invalidFile('the file holds no requests');
    if (this.requests < minRequests) throw invalidFile(`the file holds ${this.requests} requests; this provider's batch service needs at least ${minRequests}`);
  }

  /** The model, request count and fields of a file `verdict` accepted. */
  summary(): BatchFileSummary {
    return { model: this.model?.name ?? '', count: this.requests, fields: this.fields };
  }
}

const OPENAI_LIMITS: Required<BatchInputLimits> = { maxRequests: MAX_BATCH_REQUESTS, maxBytes: MAX_BATCH_BYTES, minRequests: 1 };

/**
 * Client mode: the caller's batch file, read back from the provider's storage, checked as an upload
 * is (one model, one url, unique custom_ids, every line a request) under the provider's `limits`;
 * streamed, so memory holds one line and the custom_ids. 400 `invalid_batch_file` naming `param`.
 */
export async function checkBatchStream(stream: NodeJS.ReadableStream, limits: BatchInputLimits, param: string): Promise<BatchFileSummary> {
  const check = new BatchFileCheck({ ...OPENAI_LIMITS, ...limits });
  const scanner = new JsonlScanner([check]);
  let bytes = 0;
  try {
    for await (const chunk of stream) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      bytes += buffer.length;
      scanner.write(buffer);
    }
    scanner.finish();
    check.verdict(bytes);
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'invalid_batch_file') throw badRequest(err.message, param, 'invalid_batch_file');
    throw err;
  } finally {
    if (stream instanceof Readable) stream.destroy();
  }
  return check.summary();
}

const invalidFile = (why: string) => badRequest(`Invalid batch file: ${why}`, 'file', 'invalid_batch_file');

/** The upload check of `batch` files (registered with FileService). */
export const createBatchFileCheck = (): ContentCheck => new BatchFileCheck();

/**
 * The requests of a stored (so already checked) batch file, `size` at a time; a line that no longer
 * parses (the file store changed under us) is an error, not a skipped line.
 */
export async function* readBatchFile(stream: NodeJS.ReadableStream, size: number): AsyncGenerator<BatchRequestLine[]> {
  let pending: BatchRequestLine[] = [];
  const sink: LineSink = {
    value: (line, value) => {
      const request = parseRequest(line, value);
      if (typeof request === 'string') throw invalidFile(`line ${line}: ${request}`);
      pending.push(request);
    },
    problem: (line, reason) => {
      throw invalidFile(`line ${line}: ${reason}`);
    },
  };
  const scanner = new JsonlScanner([sink]);
  try {
    for await (const chunk of stream) {
      scanner.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      while (pending.length >= size) yield pending.splice(0, size);
    }
    scanner.finish();
    if (pending.length) yield pending;
    pending = [];
  } finally {
    // Reading stops early (the first request only, or an error): the store's stream is released.
    if (stream instanceof Readable) stream.destroy();
  }
}

/** What the runner choice needs of a stored batch file: its model, how many requests, which body fields they set. */
export interface BatchFileSummary {
  model: string;
  count: number;
  /** Body fields any request sets; `response_format` only when it asks for more than text (JSON mode, a schema). */
  fields: Set<string>;
}

/** Reads a stored batch file through once: `onlyModel` stops at its first request. */
export async function summariseBatchFile(stream: NodeJS.ReadableStream, onlyModel: boolean): Promise<BatchFileSummary | null> {
  let summary: BatchFileSummary | null = null;
  for await (const chunk of readBatchFile(stream, 1000)) {
    summary ??= { model: String(chunk[0].body.model), count: 0, fields: new Set() };
    summary.count += chunk.length;
    for (const { body } of chunk) addFields(summary.fields, body);
    if (onlyModel) break;
  }
  return summary;
}

/** Adds the fields `body` sets to `fields`: `response_format` only when it asks for more than text (text is what every provider answers). */
function addFields(fields: Set<string>, body: Record<string, unknown>): void {
  for (const [field, value] of Object.entries(body)) {
    if (!(field === 'response_format' && isObject(value) && value.type === 'text')) fields.add(field);
  }
}
