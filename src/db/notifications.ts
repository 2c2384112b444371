import { Client } from 'pg';

export interface NotificationHandlers {
  onNotification(payload: string): void;
  /** True once the channel is listened to; false when the connection is lost (notifications may be missed until it is back). */
  onListening(listening: boolean, err?: unknown): void;
}

export interface NotificationListener {
  close(): Promise<void>;
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5000;
/** A connection that died silently (no RST) is noticed by this query failing, not only by TCP keep-alive. */
const HEARTBEAT_MS = 5000;
export const LISTENER_APPLICATION_NAME = 'gateway-notification-listener';

/**
 * LISTEN on a dedicated connection (a pooled one would be handed to queries and lose it), reconnecting
 * with backoff whenever it is lost. Resolves after the first attempt, connected or not, so the gateway
 * starts while the listener keeps retrying.
 */
export async function listenPostgres(url: string, channel: string, handlers: NotificationHandlers): Promise<NotificationListener> {
  let closed = false;
  let current: Client | undefined;
  let retryMs = RETRY_MIN_MS;
  let retry: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const lost = (client: Client, err?: unknown) => {
    if (current !== client) return;
    current = undefined;
    clearInterval(heartbeat);
    client.removeAllListeners('notification');
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
    client.on('notification', (message) => handlers.onNotification(message.payload ?? ''));
    client.on('error', (err) => lost(client, err));
    client.on('end', () => lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
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
