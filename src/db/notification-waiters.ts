/**
 * Who waits for a notification to be applied by every listening process (see `listenPostgres`): the
 * author of a change that must be in force in every replica before it is answered.
 */
export class NotificationWaiters {
  private readonly waiters = new Map<string, Set<() => void>>();

  /** Whether a change's author waits for `payload`. */
  isAwaited(payload: string): boolean {
    return this.waiters.has(payload);
  }

  /** Every listening process, this one included, has applied `payload`. */
  delivered(payload: string): void {
    for (const wake of this.waiters.get(payload) ?? []) wake();
  }

  /**
   * A promise settled once every listening process has applied `payload` (or after `timeoutMs`, or at
   * once when this one is not `listening`), taken before the change is made: a change answered only
   * then is in force in every replica from the client's next request on.
   */
  whenHeard(payload: string, timeoutMs: number, listening: boolean): { heard: Promise<void>; cancel(): void } {
    if (!listening) return { heard: Promise.resolve(), cancel: () => {} };
    let done = () => {};
    const heard = new Promise<void>((resolve) => {
      const timer = setTimeout(() => done(), timeoutMs);
      done = () => {
        clearTimeout(timer);
        this.waiters.get(payload)?.delete(done);
        if (this.waiters.get(payload)?.size === 0) this.waiters.delete(payload);
        resolve();
      };
      const set = this.waiters.get(payload) ?? new Set();
      set.add(done);
      this.waiters.set(payload, set);
    });
    return { heard, cancel: () => done() };
  }
}
