/**
 * The usage ledger's writer. Recording a call only appends to an in-memory buffer: the request never
 * waits for the database. The buffer is written in one multi-row insert every `flushMs`, or as soon as
 * it holds `maxRows`. The cost of that: a crash (not a graceful stop, which flushes) loses at most the
 * rows of the last flush interval. A failed insert (database outage) keeps its rows for the next
 * flush, up to `maxRows × 10` rows held; beyond that the oldest are dropped and the loss is logged.
 */
import type { Logger } from '../../logger';
import type { UsageRow } from './usage.model';
import type { UsageRepository } from './usage.repository';

export interface LedgerOptions {
  /** Off: nothing is recorded (GATEWAY_USAGE_LEDGER=off). */
  enabled: boolean;
  flushMs: number;
  maxRows: number;
  retentionDays: number;
}

const PRUNE_EVERY_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
/** How many full batches a database outage may hold back before rows are dropped. */
const HELD_BATCHES = 10;

export class UsageLedger {
  private buffer: UsageRow[] = [];
  private writing: Promise<void> = Promise.resolve();
  private timers: NodeJS.Timeout[] = [];
  /** The pruning under way, awaited by `stop` so that no statement outlives it. */
  private pruning: Promise<number> = Promise.resolve(0);

  constructor(
    private readonly repository: UsageRepository,
    private readonly options: LedgerOptions,
    private readonly logger: Logger,
  ) {}

  get enabled(): boolean {
    return this.options.enabled;
  }

  /** Appends a row; written with the next flush. */
  record(row: UsageRow): void {
    if (!this.options.enabled) return;
    this.buffer.push(row);
    if (this.buffer.length >= this.options.maxRows) void this.flush();
  }

  /** Flushes on an interval and prunes old rows (now, then hourly). */
  start(): void {
    if (!this.options.enabled) return;
    this.timers.push(setInterval(() => void this.flush(), this.options.flushMs).unref());
    const prune = () => {
      this.pruning = this.prune();
    };
    prune();
    this.timers.push(setInterval(prune, PRUNE_EVERY_MS).unref());
  }

  /** Stops the timers, writes what is buffered and lets a pruning under way finish. */
  async stop(): Promise<void> {
    this.timers.forEach(clearInterval);
    this.timers = [];
    await Promise.all([this.flush(), this.pruning]);
  }

  /** Writes the buffered rows; resolves once they (and any write already under way) are in the database. */
  flush(): Promise<void> {
    this.writing = this.writing.then(() => this.write());
    return this.writing;
  }

  /**
   * Writes the rows buffered when it starts, at most `maxRows` per insert. Rows recorded while it writes
   * wait for the next flush: taking them too would turn one flush into a loop of small inserts as long
   * as calls keep coming (under load, an insert of about twenty rows after every ~30-ms round trip:
   * each insert's fixed cost, thirty to forty times a second, was most of the ledger's cost per call).
   */
  private async write(): Promise<void> {
    let pending = this.buffer.length;
    while (pending > 0) {
      const rows = this.buffer.splice(0, Math.min(pending, this.options.maxRows));
      pending -= rows.length;
      try {
        await this.repository.insert(rows);
      } catch (err) {
        this.holdBack(rows, err);
        return;
      }
    }
  }

  /** Rows whose insert failed go back in front of the buffer, within the cap. */
  private holdBack(rows: UsageRow[], err: unknown): void {
    const held = [...rows, ...this.buffer];
    const cap = this.options.maxRows * HELD_BATCHES;
    const dropped = Math.max(0, held.length - cap);
    this.buffer = held.slice(dropped);
    this.logger.warn({ err, held: this.buffer.length, dropped }, 'usage ledger: insert failed, rows kept for the next flush');
  }

  /** Deletes rows older than the retention period. */
  async prune(now = Date.now()): Promise<number> {
    try {
      return await this.repository.deleteBefore(new Date(now - this.options.retentionDays * DAY_MS));
    } catch (err) {
      this.logger.warn({ err }, 'usage ledger: pruning failed');
      return 0;
    }
  }
}
