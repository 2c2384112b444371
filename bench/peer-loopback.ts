/**
 * Preloaded (`node --require`) into the reference gateway's process by bench/peer-gateway.ts, which
 * cannot be told where to listen (its start script listens on every interface) and must not reach
 * the network during a benchmark:
 *
 *   - every server it starts listens on 127.0.0.1 only; the first one's port goes to the parent (IPC);
 *   - a TCP connection to anything but loopback is refused before it starts, and reported to the
 *     parent as `{outbound: "host:port"}` (the benchmark then fails: its figures would be void).
 */
import net from 'node:net';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

type Listen = (this: net.Server, ...args: unknown[]) => net.Server;
const listen = net.Server.prototype.listen as Listen;
let reported = false;

net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
  // @hono/node-server calls listen(port, hostname, callback) with no hostname unless given one.
  if (typeof args[0] === 'number' && typeof args[1] !== 'string') {
    const callback = args.find((a) => typeof a === 'function');
    args = callback ? [args[0], '127.0.0.1', callback] : [args[0], '127.0.0.1'];
  }
  this.once('listening', () => {
    const address = this.address();
    if (reported || !address || typeof address === 'string') return;
    reported = true;
    process.send?.(address.port);
  });
  return listen.apply(this, args);
} as typeof net.Server.prototype.listen;

type Connect = (this: net.Socket, ...args: unknown[]) => net.Socket;
const connect = net.Socket.prototype.connect as Connect;

/** Where a `connect` call goes: `connect(options)`, `connect(port, host)`, `connect(path)`, or Node's own normalized `[options, callback]`. */
function destination(args: unknown[]): { host: string; port: unknown } | undefined {
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
  if (typeof first === 'string') return undefined; // a Unix socket or pipe path
  if (typeof first === 'number') return { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: first };
  const options = (first ?? {}) as { host?: string; port?: unknown; path?: string };
  if (options.path) return undefined;
  return { host: options.host ?? 'localhost', port: options.port };
}

net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
  const to = destination(args);
  if (!to || LOOPBACK.has(to.host)) return connect.apply(this, args);
  const where = `${to.host}:${String(to.port)}`;
  process.send?.({ outbound: where });
  process.nextTick(() => this.destroy(new Error(`benchmark: connection to ${where} refused (the reference gateway runs on loopback only)`)));
  return this;
};
