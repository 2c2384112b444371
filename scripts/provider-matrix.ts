/**
 * `npm run docs:providers`: the README's support matrix, from what each provider module declares (a
 * test fails when the README's copy is stale).
 */
import { OPERATIONS, PROVIDERS } from '../src/providers/registry';
import type { OperationName } from '../src/providers/types';

const LABELS: Record<OperationName, string> = {
  uploadFile: 'upload',
  listFiles: 'list files',
  getFile: 'get file',
  fileContent: 'content',
  deleteFile: 'delete file',
  createJob: 'create job',
  getJob: 'get job',
  listJobs: 'list jobs',
  cancelJob: 'cancel',
  listEvents: 'events',
  listCheckpoints: 'checkpoints',
  findJob: 'find job',
  chat: 'chat',
};

export function providerMatrix(): string {
  const header = `| provider | ${OPERATIONS.map((op) => LABELS[op]).join(' | ')} |`;
  const rule = `|---|${OPERATIONS.map(() => ':-:').join('|')}|`;
  const rows = PROVIDERS.map((p) => `| ${p.name} | ${OPERATIONS.map((op) => (typeof p.operations[op] === 'function' ? '✓' : '—')).join(' | ')} |`);
  return [header, rule, ...rows].join('\n');
}

if (require.main === module) console.log(providerMatrix());
