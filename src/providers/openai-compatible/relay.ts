/**
 * A streamed answer in OpenAI's wire format relayed, not re-encoded (issue 24): each event goes to the
 * caller as the provider wrote it, with only what the contract changes: the model the caller named in
 * place of the provider's, and the usage taken out (the gateway asks for it upstream; the route sends
 * it as its own last chunk when the caller asked, and the usage ledger records it). What to change is
 * found by a string search; an event is parsed only when the search finds what it cannot pass on as it
 * is: a usage object, an error, a finish reason outside OpenAI's words (`eos`), no model, a text that
 * is not an object from `{` to `}`, or a first chunk whose id and time the search cannot take (headOf). So a
 * stream costs one `JSON.parse` (its usage), not one per event.
 *
 * The search relies on JSON's escaping: inside a string every `"` is escaped, so `"model"` followed by
 * a colon is a key. It takes the first such key, which in a `chat.completion.chunk` is the top-level
 * one (nothing nested in a chunk has a `model` key).
 */
import { randomUUID } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { GatewayError } from '../../errors';
import { parseAnswer } from '../answer';
import type { ApiEndpoint } from '../api';
import type { ChatUsage, FinishReason } from '../types';
import { streamFailure, toFinishReason, toUsage, wireCompletion } from './chat-wire';

/** Bounds the bytes buffered while waiting for the end of one event. */
const MAX_EVENT_BYTES = 1024 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const LOWER_N = 0x6e;

/** The finish reasons passed on as they are (OpenAI's); any other is rewritten (toFinishReason). */
const OPENAI_FINISH_REASONS = new Set<string>(['stop', 'length', 'content_filter', 'tool_calls']);

/** What the stream's chunks repeat: the first relayed chunk's id and time. */
export interface RelayHead {
  id: string;
  created: number;
}

export class WireRelay {
  /** The provider's usage (the last one it sent), for the ledger and the caller's usage chunk. */
  usage: ChatUsage | null = null;
  /** The first chunk with choices, once relayed. */
  head: RelayHead | undefined;
  /** The last finish reason relayed (traces). */
  finishReason: FinishReason | undefined;
  /** Whether the provider has sent a chunk (even one with nothing for the caller). */
  opened = false;
  /** `[DONE]` seen: later events are ignored (the body is still read to its end). */
  private done = false;
  private buffer = '';
  /** A provider failure held back until the events before it are delivered. */
  private failure: GatewayError | undefined;
  private readonly decoder = new StringDecoder('utf8');
  /** The caller's model as a JSON string. */
  private readonly quotedModel: string;

  constructor(
    private readonly endpoint: ApiEndpoint,
    /** The model the caller named: every chunk carries it. */
    private readonly model: string,
    /** The caller asked for usage (`stream_options.include_usage`): `"usage":null` on each chunk is left in, as OpenAI sends it. */
    private readonly includeUsage: boolean,
  ) {
    this.quotedModel = JSON.stringify(model);
  }

  /** The caller's events (`data: …` and a blank line each) among the complete events `bytes` ends; an incomplete one waits for the next read. */
  read(bytes: Buffer): string {
    this.rethrow();
    this.buffer += this.decoder.write(bytes);
    if (this.buffer.includes('\r')) this.buffer = unifiedLineEnds(this.buffer);
    let out = '';
    let from = 0;
    for (let end = this.buffer.indexOf('\n\n'); end >= 0; end = this.buffer.indexOf('\n\n', from)) {
      try {
        out += this.relayEvent(this.buffer.slice(from, end));
      } catch (err) {
        // The events before the failure still reach the caller, then the failure (rethrow).
        if (!out || !(err instanceof GatewayError)) throw err;
        this.failure = err;
        return out;
      }
      from = end + 2;
    }
    this.buffer = from ? this.buffer.slice(from) : this.buffer;
    if (this.buffer.length > MAX_EVENT_BYTES) {
      throw new GatewayError('provider', `${this.endpoint.title} sent a stream event over ${MAX_EVENT_BYTES} bytes`, { status: 502 });
    }
    return out;
  }

  /** The caller's events of what remained when the provider's body ended (an event cut off by the end still counts). */
  end(): string {
    this.rethrow();
    const rest = unifiedLineEnds(this.buffer + this.decoder.end());
    this.buffer = '';
    return rest.trim() ? this.relayEvent(rest) : '';
  }

  /** Throws a failure met in a read after events it returned. */
  rethrow(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  private relayEvent(event: string): string {
    const data = dataOf(event);
    if (data === null || this.done) return '';
    if (data === '[DONE]') {
      this.done = true;
      return '';
    }
    this.opened = true;
    return this.passedOn(data) ?? this.reencoded(data);
  }

  /** The event with the caller's model by string search, '' when it carries nothing for the caller; undefined when it must be parsed. */
  private passedOn(data: string): string | undefined {
    if (!objectLike(data) || valueAt(data, '"error"') >= 0) return undefined;
    const usage = valueAt(data, '"usage"');
    if (usage >= 0 && data.charCodeAt(usage) !== LOWER_N) return undefined;
    if (!this.knownFinishReasons(data)) return undefined;
    const choices = valueAt(data, '"choices"');
    if (choices >= 0 && data.charCodeAt(choices) === OPEN_BRACKET && data.charCodeAt(skipBlanks(data, choices + 1)) === CLOSE_BRACKET) return '';
    this.head ??= headOf(data, choices);
    if (this.head === undefined) return undefined;
    const model = valueAt(data, '"model"');
    const modelEnd = model >= 0 && data.charCodeAt(model) === QUOTE ? stringEnd(data, model) : -1;
    if (modelEnd < 0) return undefined;
    const text = data.slice(0, model) + this.quotedModel + data.slice(modelEnd);
    return `data: ${usage >= 0 && !this.includeUsage ? withoutNullUsage(text) : text}\n\n`;
  }

  /** Whether every finish reason of the event is one of OpenAI's (or null); notes the last for traces. */
  private knownFinishReasons(data: string): boolean {
    for (let at = valueAt(data, '"finish_reason"'); at >= 0; at = valueAt(data, '"finish_reason"', at)) {
      if (data.charCodeAt(at) !== QUOTE) continue;
      const reason = data.slice(at + 1, stringEnd(data, at) - 1);
      if (!OPENAI_FINISH_REASONS.has(reason)) return false;
      this.finishReason = reason as FinishReason;
    }
    return true;
  }

  /** The event parsed: a failure thrown, the usage kept, the rest re-serialised with the caller's model and OpenAI's finish reasons. */
  private reencoded(data: string): string {
    let raw: Record<string, unknown>;
    try {
      raw = JSON.parse(data) as Record<string, unknown>;
    } catch {
      throw new GatewayError('provider', `${this.endpoint.title} sent a stream chunk that is not JSON`, { status: 502 });
    }
    const chunk = parseAnswer(wireCompletion, raw, this.endpoint.title, 'stream chunk');
    if (chunk.error) throw streamFailure(chunk.error, this.endpoint);
    this.usage = toUsage(chunk.usage) ?? this.usage;
    // A chunk without choices (the usage alone, Azure's prompt filter results) has nothing else for the caller.
    if (!chunk.choices?.length) return '';
    // `||`: Azure opens its streams with a chunk whose id is empty.
    this.head ??= { id: chunk.id || `chatcmpl-${randomUUID()}`, created: chunk.created || Math.floor(Date.now() / 1000) };
    for (const choice of raw.choices as Record<string, unknown>[]) {
      const reason = toFinishReason(choice.finish_reason as string | null | undefined);
      if (reason) choice.finish_reason = this.finishReason = reason;
    }
    raw.model = this.model;
    if (raw.usage != null || !this.includeUsage) delete raw.usage;
    return `data: ${JSON.stringify(raw)}\n\n`;
  }
}

/**
 * The stream's id and time from its first chunk by search (no parse): a plain id (no escape, not empty:
 * Azure's first id is empty) and an integer time, both keys before `choices` (so neither is a tool
 * call's `id`); undefined when the chunk must be parsed for them.
 */
function headOf(data: string, choices: number): RelayHead | undefined {
  const id = valueAt(data, '"id"');
  const created = valueAt(data, '"created"');
  if (id < 0 || created < 0 || choices < 0 || id > choices || created > choices || data.charCodeAt(id) !== QUOTE) return undefined;
  const idEnd = stringEnd(data, id);
  const time = /^\d+/.exec(data.slice(created, created + 20));
  if (idEnd <= id + 2 || data.lastIndexOf('\\', idEnd) > id || time === null) return undefined;
  return { id: data.slice(id + 1, idEnd - 1), created: Number(time[0]) };
}

/**
 * Line ends as `\n` (server-sent events may use `\r\n` or `\r`); a `\r` that ends the text is kept,
 * as its `\n` may come with the next read.
 */
function unifiedLineEnds(text: string): string {
  const held = text.endsWith('\r') ? 1 : 0;
  return text.slice(0, text.length - held).replace(/\r\n?/g, '\n') + text.slice(text.length - held);
}

/** An event's data (its `data:` lines joined), or null for an event without any (comments, keep-alives). */
function dataOf(event: string): string | null {
  if (event.startsWith('data:') && !event.includes('\n')) return event.slice(event.charCodeAt(5) === 0x20 ? 6 : 5);
  const lines = event.split('\n').filter((line) => line.startsWith('data:'));
  return lines.length ? lines.map((line) => line.slice(line.charCodeAt(5) === 0x20 ? 6 : 5)).join('\n') : null;
}

/** Starts with `{` and ends with `}`: a cut-off or non-object chunk is parsed (and refused as not JSON) rather than passed on. */
const objectLike = (data: string) => data.charCodeAt(0) === 0x7b && data.trimEnd().endsWith('}');

function skipBlanks(json: string, at: number): number {
  let i = at;
  for (let c = json.charCodeAt(i); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; c = json.charCodeAt(++i));
  return i;
}

/** Where the value of the key `quotedKey` (`"name"`) starts in `json` (searching after `after`), or -1. */
function valueAt(json: string, quotedKey: string, after = -1): number {
  for (let at = json.indexOf(quotedKey, after + 1); at >= 0; at = json.indexOf(quotedKey, at + 1)) {
    // A quote escaped in a string is not a key's.
    if (json.charCodeAt(at - 1) === BACKSLASH) continue;
    const colon = skipBlanks(json, at + quotedKey.length);
    if (json.charCodeAt(colon) === COLON) return skipBlanks(json, colon + 1);
  }
  return -1;
}

/** The index after the JSON string that opens at `start`, or -1 when it does not close. */
function stringEnd(json: string, start: number): number {
  for (let at = json.indexOf('"', start + 1); at >= 0; at = json.indexOf('"', at + 1)) {
    let slashes = 0;
    while (json.charCodeAt(at - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return at + 1;
  }
  return -1;
}

/** The chunk without its `"usage":null` (which OpenAI adds to every chunk when usage was asked for, as the gateway does upstream). */
function withoutNullUsage(json: string): string {
  const at = valueAt(json, '"usage"');
  const key = json.lastIndexOf('"usage"', at);
  const after = at + 'null'.length;
  const before = json.lastIndexOf(',', key);
  if (before >= 0 && json.slice(before + 1, key).trim() === '') return json.slice(0, before) + json.slice(after);
  const next = skipBlanks(json, after);
  return json.slice(0, key) + json.slice(json.charCodeAt(next) === 0x2c ? next + 1 : after);
}
