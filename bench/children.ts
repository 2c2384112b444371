/** The benchmarks' child processes: the fake provider and the gateway each run in their own (as in production). */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/** Runs `entry` (a compiled script next to this one) as a child process and waits for the port it reports. */
export async function child(entry: string, env: Record<string, string>): Promise<{ proc: ChildProcess; port: number }> {
  const proc = fork(path.join(__dirname, entry), [], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    proc.once('message', (message: unknown) => (typeof message === 'number' ? resolve(message) : reject(new Error(String(message)))));
    proc.once('exit', (code) => reject(new Error(`${entry} exited with ${code}`)));
  });
  return { proc, port };
}
