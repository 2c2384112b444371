import { Client } from 'pg';

export interface NotificationHandlers {
  onNotification(payload: string): void;
  /**
   * Whether this process waits for `payload` to be handled by every listening process (the author of
   * a change that must be in force everywhere before it is answered). Such payloads are followed to
   * their delivery; any other is only handled.
   */
  isAwaited(payload: string): boolean;
  /** An awaited payload has been handled by every process listening on the channel. */
  onDelivered(payload: string): void;
  /** True once the channel is listened to; false when the connection is lost (notifications may be missed until it is back). */
  onListening(listening: boolean, err?: unknown): void;
}

export interface NotificationListener {
  close(): Promise<void>;
}

/** Where each listener acknowledges, once handled, every notification it heard (see `listenPostgres`). */
export const handledChannel = (channel: string) => `${channel}_handled`;

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5000;
/** A connection that died silently (no RST) is noticed by this query failing, not only by TCP keep-alive. */
const HEARTBEAT_MS = 5000;
export const LISTENER_APPLICATION_NAME = 'gateway-notification-listener';

/**
 * LISTEN on a dedicated connection (a pooled one would be handed to queries and lose it), reconnecting
 * with backoff whenever it is lost. Resolves after the first attempt, connected or not, so the gateway
 * starts while the listener keeps retrying.
 *
 * Postgres delivers a notification to every listener at the same commit, but each process handles
 * it when its event loop gets to it. So every listener acknowledges each notification once handled
 * (on `handledChannel`, from its own connection), and a process awaiting a payload counts the
 * acknowledgements until every listening connection of the database has sent one: only then is the
 * change in force everywhere.
 */
export async function listenPostgres(url: string, channel: string, handlers: NotificationHandlers): Promise<NotificationListener> {
  let closed = false;
  let current: Client | undefined;
  let retryMs = RETRY_MIN_MS;
  let retry: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  const acknowledgements = new Acknowledgements();

  const lost = (client: Client, err?: unknown) => {
    if (current !== client) return;
    current = undefined;
    clearInterval(heartbeat);
    client.removeAllListeners('notification');
    // Acknowledgements can no longer be heard: whoever waits for them is told to stop waiting.
    acknowledgements.abandon();
    client.end().catch(() => {});
    handlers.onListening(false, err);
    if (closed) return;
    retry = setTimeout(() => void connect(), retryMs);
    retry.unref();
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
  };

  const connect = async () => {
    const client = new Client({ connectionString: url, keepAlive: true, application_name: LISTENER_APPLICATION_NAME });
    current = client;
    client.on('notification', ({ channel: heardOn, payload = '', processId }) => {
      if (heardOn === channel) {
        handlers.onNotification(payload);
        if (handlers.isAwaited(payload)) acknowledgements.expect(payload, listeningBackends(client), () => handlers.onDelivered(payload));
        client.query('SELECT pg_notify($1, $2)', [handledChannel(channel), payload]).catch((err: unknown) => lost(client, err));
      } else {
        acknowledgements.received(payload, processId);
      }
    });
    client.on('error', (err) => lost(client, err));
    client.on('end', () => lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}; LISTEN ${client.escapeIdentifier(handledChannel(channel))}`);
    } catch (err) {
      if (current === client) lost(client, err);
      else await client.end().catch(() => {});
      return;
    }
    // Closed while connecting.
    if (current !== client) {
      await client.end().catch(() => {});
      return;
    }
    retryMs = RETRY_MIN_MS;
    heartbeat = setInterval(() => client.query('SELECT 1').catch((err: unknown) => lost(client, err)), HEARTBEAT_MS);
    heartbeat.unref();
    handlers.onListening(true);
  };

  await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      clearInterval(heartbeat);
      const client = current;
      current = undefined;
      await client?.end().catch(() => {});
    },
  };
}

/** The backends listening on the channel now: the listening connections of every gateway process on this database. */
async function listeningBackends(client: Client): Promise<number[]> {
  const rows = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [
    LISTENER_APPLICATION_NAME,
  ]);
  return rows.rows.map((row) => row.pid);
}

/**
 * The acknowledgements of awaited payloads: who has handled each, and who must have. The listeners are
 * counted when this process hears the payload, after the commit that sent it: a listener that connects
 * later never heard it, but started with an empty cache and has nothing to forget.
 */
class Acknowledgements {
  private readonly pending = new Map<string, { from: Set<number>; expected?: number[]; delivered: () => void }>();

  expect(payload: string, listeners: Promise<number[]>, delivered: () => void): void {
    const entry = { from: new Set<number>(), expected: undefined as number[] | undefined, delivered };
    this.pending.set(payload, entry);
    listeners.then(
      (pids) => {
        entry.expected = pids;
        this.check(payload);
      },
      () => this.settle(payload),
    );
  }

  received(payload: string, from: number): void {
    this.pending.get(payload)?.from.add(from);
    this.check(payload);
  }

  /** Tells every waiter to stop waiting (the connection that hears acknowledgements is gone). */
  abandon(): void {
    for (const payload of [...this.pending.keys()]) this.settle(payload);
  }

  private check(payload: string): void {
    const entry = this.pending.get(payload);
    if (entry?.expected?.every((pid) => entry.from.has(pid))) this.settle(payload);
  }

  private settle(payload: string): void {
    const entry = this.pending.get(payload);
    this.pending.delete(payload);
    entry?.delivered();
  }
}
