import { spawnSync } from 'node:child_process';

/** The Redis tests share counters through: TEST_REDIS_URL, or a local one on the default port. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Whether that Redis answers, decided once when a test file loads (jest needs it synchronously, to
 * choose between `it` and `it.skip`): a child process tries a TCP connection for at most a second.
 */
export function redisReachable(url = TEST_REDIS_URL): boolean {
  const { hostname, port } = new URL(url);
  const probe = `require('net').connect(${Number(port || 6379)}, ${JSON.stringify(hostname)}).on('connect', () => process.exit(0)).on('error', () => process.exit(1)); setTimeout(() => process.exit(1), 1000);`;
  return spawnSync(process.execPath, ['-e', probe], { timeout: 2000 }).status === 0;
}
