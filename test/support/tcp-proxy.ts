import net from 'node:net';

/** How a cut looks to the gateway: connections refused, reset as they open, or accepted and never answered. */
export type CutMode = 'refuse' | 'reset' | 'hang';

export interface TcpProxy {
  /** The port the proxy listens on (127.0.0.1); it keeps it across cuts. */
  port: number;
  /** `url` with its host and port replaced by the proxy's (a database URL through the proxy). */
  via(url: string): string;
  /** Cuts the link: open connections are reset (`refuse`, `reset`) or frozen (`hang`); new ones fail the same way. */
  cut(mode?: CutMode): Promise<void>;
  /** Restores forwarding: frozen connections resume, new ones are forwarded again. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  upstream: net.Socket | null;
}

/**
 * A TCP proxy (node:net) in front of a server — Postgres in the resilience tests and `bench:chaos` —
 * that can cut the link the three ways a database goes away and restore it, without touching the server.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: CutMode | null = null;
  const pairs = new Set<Pair>();

  const forward = (pair: Pair) => {
    const upstream = net.connect(target.port, target.host);
    pair.upstream = upstream;
    upstream.on('error', () => pair.client.destroy());
    pair.client.on('error', () => upstream.destroy());
    upstream.on('close', () => pair.client.destroy());
    pair.client.on('close', () => {
      upstream.destroy();
      pairs.delete(pair);
    });
    pair.client.pipe(upstream);
    upstream.pipe(pair.client);
  };

  const onConnection = (client: net.Socket) => {
    if (mode === 'reset') {
      client.resetAndDestroy();
      return;
    }
    const pair: Pair = { client, upstream: null };
    pairs.add(pair);
    client.on('close', () => pairs.delete(pair));
    client.on('error', () => undefined);
    // A connection opened during a hang waits, like one to an unreachable host, and is forwarded on restore.
    if (mode === 'hang') client.pause();
    else forward(pair);
  };

  let server = net.createServer(onConnection);
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  const port = await listen(0);
  const stopListening = () => new Promise<void>((resolve) => server.close(() => resolve()));

  return {
    port,
    via(url: string) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    async cut(how: CutMode = 'refuse') {
      if (mode !== null) throw new Error('the link is already cut');
      mode = how;
      for (const pair of [...pairs]) {
        if (how === 'hang') {
          pair.client.pause();
          pair.upstream?.pause();
        } else {
          pair.client.resetAndDestroy();
          pair.upstream?.destroy();
          pairs.delete(pair);
        }
      }
      if (how === 'refuse') await stopListening();
    },
    async restore() {
      const was = mode;
      mode = null;
      if (was === 'refuse') {
        server = net.createServer(onConnection);
        await listen(port);
      }
      for (const pair of pairs) {
        if (pair.upstream) {
          pair.upstream.resume();
          pair.client.resume();
        } else {
          forward(pair);
          pair.client.resume();
        }
      }
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream?.destroy();
      }
      pairs.clear();
      if (mode !== 'refuse') await stopListening();
    },
  };
}
