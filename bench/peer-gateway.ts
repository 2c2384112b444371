/**
 * The reference gateway of bench/peer.ts: Portkey's open-source AI gateway (`@portkey-ai/gateway`,
 * MIT), installed on demand into a cache folder (`.cache/bench-peer/`, git-ignored; BENCH_PEER_DIR
 * moves it) and never a dependency of this project. A cache holding the pinned versions is reused
 * without asking the registry.
 *
 * Pins: the package at PEER_VERSION; its two HTTP dependencies at the versions of its own lockfile at
 * that release (its package.json allows `^` ranges, and @hono/node-server above 1.14.2 breaks it:
 * every streamed or passed-through answer fails with "TypeError: immutable", Portkey-AI/gateway#1389).
 * Its `postinstall` (patch-package, with no patches in the published package) is not run.
 *
 * Started as its documented start script (`build/start-server.js`, the package's bin) with
 * `--port=0 --headless` and NODE_ENV=production (no console UI, no log stream), in a process of its
 * own with an environment holding only PATH (no proxy, Redis or cloud credentials to pick up), and
 * bench/peer-loopback.js preloaded: it listens on 127.0.0.1 only and cannot connect anywhere but
 * loopback.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { forkReporting } from './harness';

export const PEER_PACKAGE = '@portkey-ai/gateway';
export const PEER_VERSION = '1.15.2';
const PINS: Record<string, string> = { '@hono/node-server': '1.13.5', hono: '4.9.7' };

const run = promisify(execFile);

const cacheDir = () => path.resolve(process.env.BENCH_PEER_DIR ?? path.join(__dirname, '..', '..', '.cache', 'bench-peer'));

/** The version of `name` installed under `dir`, if any. */
function installed(dir: string, name: string): string | undefined {
  const file = path.join(dir, 'node_modules', name, 'package.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version : undefined;
}

/** Installs the pinned reference gateway into the cache folder unless it is there; the versions in use. */
export async function installPeer(): Promise<Record<string, string>> {
  const dir = cacheDir();
  const wanted: Record<string, string> = { [PEER_PACKAGE]: PEER_VERSION, ...PINS };
  const current = () => Object.fromEntries(Object.keys(wanted).map((name) => [name, installed(dir, name) ?? 'missing']));
  if (Object.entries(current()).some(([name, version]) => version !== wanted[name])) {
    await mkdir(dir, { recursive: true });
    const manifest = {
      private: true,
      description: 'bench/peer.ts: the reference gateway (cache)',
      dependencies: { [PEER_PACKAGE]: PEER_VERSION },
      overrides: PINS,
    };
    await writeFile(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    console.error(`installing ${PEER_PACKAGE}@${PEER_VERSION} into ${dir} …`);
    await run('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], { maxBuffer: 16 * 1024 * 1024 });
  }
  const versions = current();
  const wrong = Object.entries(versions).filter(([name, version]) => version !== wanted[name]);
  if (wrong.length) throw new Error(`the reference gateway's cache ${dir} holds ${JSON.stringify(versions)}, not ${JSON.stringify(wanted)}`);
  return versions;
}

/** Starts the installed reference gateway; its process and port. Connections it attempts off loopback are collected in `outbound`. */
export async function startPeer(outbound: string[]) {
  const entry = path.join(cacheDir(), 'node_modules', PEER_PACKAGE, 'build', 'start-server.js');
  const env = { PATH: process.env.PATH, NODE_ENV: 'production' };
  const peer = await forkReporting(entry, ['--port=0', '--headless'], env, ['--require', path.join(__dirname, 'peer-loopback.js')]);
  peer.proc.on('message', (message: unknown) => {
    if (typeof message === 'object' && message !== null && 'outbound' in message) outbound.push(String(message.outbound));
  });
  return peer;
}
