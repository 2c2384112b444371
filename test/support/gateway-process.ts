import { spawn, type ChildProcess } from 'node:child_process';
import { projectRoot } from '../../src/db/migrations';

/** The gateway as its own OS process (`src/main.ts`, signals and all), resolving with its URL once it listens. */
export function spawnGateway(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', 'src/main.ts'], {
    cwd: projectRoot(),
    env: { ...process.env, NODE_OPTIONS: '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /gateway listening on (http:\/\/[\d.:]+)/.exec(output);
      if (match) resolve({ child, url: match[1] });
    });
    child.once('exit', (code) => reject(new Error(`gateway process exited with ${code} before listening`)));
  });
}
