/**
 * A provider that stops sending in the middle of a streamed answer (or before its first event) would
 * hold the caller's connection open forever: the HTTP time-out covers only the wait for the answer's
 * head. The guard aborts the provider call after `ms` without a chunk, and the caller gets the
 * time-out as a provider error (504, api.md §6.2): as the answer's status when nothing was sent yet,
 * as the stream's error event otherwise.
 *
 * The guard reads every chunk, so it also tells a `CallObserver` (the usage meter) what it sees: a
 * stream is wrapped once, not once per concern (issue 26: each wrapper costs promise jobs per chunk).
 */
import { GatewayError } from '../../errors';
import type { ChatAnswer, ChatChunk } from '../../providers/types';

/** Follows a provider call through the guard: its answer, a stream's chunks as they reach the consumer, its end. */
export interface CallObserver {
  /** The answer: complete, or the head of a stream whose chunks follow. */
  answered(answer: ChatAnswer): void;
  chunk(chunk: ChatChunk): void;
  /** The call is over: complete, failed (`error`, as the consumer gets it), or a stream the consumer stopped reading (`abandoned`). */
  ended(end: CallEnd): void;
}

export type CallEnd = { error: unknown } | { abandoned: true } | Record<string, never>;

export class StallGuard {
  private readonly controller = new AbortController();
  /** Whether the provider stalled (rather than the caller leaving). */
  private stalled = false;
  private timer: NodeJS.Timeout | undefined;
  /** Whether the provider is awaited (a read or the answer's head) rather than the consumer. */
  private waiting = false;

  constructor(
    private readonly ms: number,
    /** The caller's signal (one per call): the provider call also ends when the caller goes away. */
    caller: AbortSignal,
  ) {
    // One controller for both causes: cheaper per stream than `AbortSignal.any` of two signals.
    if (caller.aborted) this.controller.abort(caller.reason);
    else caller.addEventListener('abort', () => this.controller.abort(caller.reason), { once: true });
  }

  /** What the provider call is given. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Runs the provider call; a stall before its answer is a 504, whatever error the abort caused. */
  async answer(call: Promise<ChatAnswer>, provider: string, observer?: CallObserver): Promise<ChatAnswer> {
    this.arm();
    let answer: ChatAnswer;
    try {
      answer = await call;
    } catch (err) {
      const failure = this.stalled ? this.timeout(provider) : err;
      observer?.ended({ error: failure });
      throw failure;
    } finally {
      this.disarm();
    }
    observer?.answered(answer);
    if (answer.stream) return { ...answer, chunks: this.chunks(answer.chunks, provider, observer) };
    observer?.ended({});
    return answer;
  }

  private async *chunks(chunks: AsyncIterable<ChatChunk>, provider: string, observer: CallObserver | undefined): AsyncGenerator<ChatChunk> {
    const iterator = chunks[Symbol.asyncIterator]();
    // Until the stream ends or fails, leaving the loop means the consumer stopped reading.
    let end: CallEnd = { abandoned: true };
    try {
      for (;;) {
        this.arm();
        let next: IteratorResult<ChatChunk>;
        try {
          next = await iterator.next();
        } finally {
          this.waiting = false;
        }
        if (next.done) {
          end = {};
          return;
        }
        observer?.chunk(next.value);
        yield next.value;
      }
    } catch (err) {
      const failure = this.stalled ? this.timeout(provider) : err;
      end = { error: failure };
      throw failure;
    } finally {
      observer?.ended(end);
      this.disarm();
      // Also when the consumer stops early: the provider's stream is closed.
      await iterator.return?.();
    }
  }

  /**
   * Starts the wait for the provider. One timer per call, restarted (`refresh`) for each read rather
   * than a new one per chunk; while the consumer holds a chunk (`waiting` false, a slow client's
   * socket full) the timer may run out: that is no stall, and the next read restarts it.
   */
  private arm(): void {
    this.waiting = true;
    if (this.timer) this.timer.refresh();
    else
      this.timer = setTimeout(() => {
        if (!this.waiting) return;
        this.stalled = true;
        this.controller.abort();
      }, this.ms);
  }

  private disarm(): void {
    this.waiting = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private timeout(provider: string): GatewayError {
    return new GatewayError('provider', `${provider} sent nothing for ${this.ms} ms: the call was abandoned`, { status: 504 });
  }
}
