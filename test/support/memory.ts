/**
 * Memory as the tests that show something stays flat measure it: after a full garbage collection, so
 * what is measured is memory still held, not garbage not yet collected.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
const collectGarbage: () => void = vm.runInNewContext('gc');

/** Memory held now: the process's resident set, and the bytes of the Buffers alive. */
export function held(): { rss: number; arrayBuffers: number } {
  collectGarbage();
  const { rss, arrayBuffers } = process.memoryUsage();
  return { rss, arrayBuffers };
}

/**
 * Runs `work` while sampling the memory held, and answers its result and the peak growth over what was
 * held before. Each sample is a full collection, whose cost grows with the heap earlier test files left
 * in the jest worker and with the machine's load: the next sample waits ten times as long as this one
 * took (500 ms at least), so sampling never takes more than a tenth of the time the work has.
 */
export async function peakGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growth: { rss: number; arrayBuffers: number } }> {
  const baseline = held();
  const peak = { ...baseline };
  let sampler: NodeJS.Timeout | undefined;
  let sampling = true;
  const sample = () => {
    const started = performance.now();
    const now = held();
    peak.rss = Math.max(peak.rss, now.rss);
    peak.arrayBuffers = Math.max(peak.arrayBuffers, now.arrayBuffers);
    if (sampling) sampler = setTimeout(sample, Math.max(500, 10 * (performance.now() - started)));
  };
  sampler = setTimeout(sample, 500);
  try {
    const result = await work();
    return { result, growth: { rss: peak.rss - baseline.rss, arrayBuffers: peak.arrayBuffers - baseline.arrayBuffers } };
  } finally {
    sampling = false;
    clearTimeout(sampler);
  }
}
