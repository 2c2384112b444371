/**
 * A provider that stops sending in the middle of a streamed answer (or before its first event) would
 * hold the caller's connection open forever: the HTTP time-out covers only the wait for the answer's
 * head. The guard aborts the provider call after `ms` without a chunk, and the caller gets the
 * time-out as a provider error (504, api.md §6.2): as the answer's status when nothing was sent yet,
 * as the stream's error event otherwise.
 */
import { GatewayError } from '../../errors';
import type { ChatAnswer, ChatChunk } from '../../providers/types';

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
  async answer(call: Promise<ChatAnswer>, provider: string): Promise<ChatAnswer> {
    this.arm();
    try {
      const answer = await call;
      return answer.stream ? { ...answer, chunks: this.chunks(answer.chunks, provider) } : answer;
    } catch (err) {
      throw this.stalled ? this.timeout(provider) : err;
    } finally {
      this.disarm();
    }
  }

  private async *chunks(chunks: AsyncIterable<ChatChunk>, provider: string): AsyncGenerator<ChatChunk> {
    const iterator = chunks[Symbol.asyncIterator]();
    try {
      for (;;) {
        this.arm();
        let next: IteratorResult<ChatChunk>;
        try {
          next = await iterator.next();
        } finally {
          this.waiting = false;
        }
        if (next.done) return;
        yield next.value;
      }
    } catch (err) {
      throw this.stalled ? this.timeout(provider) : err;
    } finally {
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
