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
        const next = await iterator.next().finally(() => this.disarm());
        if (next.done) return;
        yield next.value;
      }
    } catch (err) {
      throw this.stalled ? this.timeout(provider) : err;
    } finally {
      // Also when the consumer stops early: the provider's stream is closed.
      await iterator.return?.();
    }
  }

  private arm(): void {
    this.timer = setTimeout(() => {
      this.stalled = true;
      this.controller.abort();
    }, this.ms);
  }

  private disarm(): void {
    clearTimeout(this.timer);
  }

  private timeout(provider: string): GatewayError {
    return new GatewayError('provider', `${provider} sent nothing for ${this.ms} ms: the call was abandoned`, { status: 504 });
  }
}
