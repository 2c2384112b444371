/**
 * `npm run docs:providers`: the README's provider tables (what each module supports, and the
 * variables that point it elsewhere), generated from the modules' declarations and written between
 * the README's markers. A test fails when the README's copy is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROVIDERS } from '../src/providers/registry';
import { CHAT_FIELDS } from '../src/providers/chat-fields';
import { OPERATIONS } from '../src/providers/types';
import type { ProviderOperationName } from '../src/providers/types';

const LABELS: Record<ProviderOperationName, string> = {
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
  listModels: 'models',
};

const row = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;

/** Which contract operations each provider implements (the same in client mode and for hosted jobs). */
export function providerMatrix(): string {
  return [
    row(['provider', ...OPERATIONS.map((op) => LABELS[op])]),
    row(['---', ...OPERATIONS.map(() => ':-:')]),
    ...PROVIDERS.map((p) => row([`\`${p.name}\``, ...OPERATIONS.map((op) => (typeof p.operations[op] === 'function' ? '✓' : '—'))])),
  ].join('\n');
}

/** Every endpoint variable of every provider, with its default, and the hosts its signed URLs may point to. */
export function providerEndpoints(): string {
  const rows = PROVIDERS.flatMap((p) => [
    ...Object.values(p.endpoints).map((e) => row([`\`${e.env}\``, `\`${e.default}\``, p.title])),
    ...(p.downloads ? [row([`\`${p.downloads.env}\``, p.downloads.default.map((h) => `\`${h}\``).join(', '), `${p.title} (signed URLs)`])] : []),
  ]);
  return [row(['variable', 'default', 'provider']), row(['---', '---', '---']), ...rows].join('\n');
}

/** The settings of each provider that a stored integration pins (see `pinned` in src/providers/settings.ts). */
export function pinnedSettings(): string {
  const rows = PROVIDERS.map((p) => {
    const pinned = Object.values(p.settings).filter((s) => s.pinned);
    return row([`\`${p.name}\``, pinned.length ? pinned.map((s) => `\`${s.header}\``).join(', ') : '—']);
  });
  return [row(['provider', 'settings taken from the integration only']), row(['---', '---']), ...rows].join('\n');
}

/** Which fields of OpenAI's chat request each provider carries (its module's `chatSupport`); the rest are 400 `unsupported_parameter`. */
export function chatFieldMatrix(): string {
  const chatting = PROVIDERS.filter((p) => typeof p.operations.chat === 'function');
  const mark = (carried: boolean) => (carried ? '✓' : '—');
  return [
    row(['field', ...chatting.map((p) => `\`${p.name}\``)]),
    row(['---', ...chatting.map(() => ':-:')]),
    ...CHAT_FIELDS.map((field) => row([`\`${field}\``, ...chatting.map((p) => mark(p.chatSupport?.fields.includes(field) ?? false))])),
    row(['fields the gateway does not know', ...chatting.map((p) => mark(p.chatSupport?.unknownFields ?? false))]),
  ].join('\n');
}

/** Which providers' own batch services the gateway uses: for hosted batches (the provider runner), and in client mode (`batch.client`). */
export function batchSupport(): string {
  const mark = (on: boolean) => (on ? '✓' : '—');
  return [
    row(['provider', 'provider runner (hosted)', 'client mode']),
    row(['---', ':-:', ':-:']),
    ...PROVIDERS.map((p) => row([`\`${p.name}\``, mark(p.batch !== undefined), mark(p.batch?.client !== undefined)])),
  ].join('\n');
}

export const README_BLOCKS = {
  'provider-matrix': providerMatrix,
  'provider-endpoints': providerEndpoints,
  'pinned-settings': pinnedSettings,
  'chat-fields': chatFieldMatrix,
  'batch-support': batchSupport,
} as const;

/** The text between `<!-- name:start … -->` and `<!-- name:end -->`. */
export function readmeBlock(readme: string, name: string): string {
  const match = new RegExp(`<!-- ${name}:start[^>]*-->\\n([\\s\\S]*?)<!-- ${name}:end -->`).exec(readme);
  if (!match) throw new Error(`README has no ${name} block`);
  return match[1].trim();
}

/** Table rows with their cells trimmed and rules reduced, so prettier's padding does not count. */
export function normaliseTable(table: string): string[] {
  return table
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .map((line) =>
      line
        .split('|')
        .map((cell) => cell.trim().replace(/^(:?)-+(:?)$/, '$1-$2'))
        .join('|'),
    );
}

function writeReadme(file: string): void {
  let readme = readFileSync(file, 'utf8');
  for (const [name, generate] of Object.entries(README_BLOCKS)) {
    readmeBlock(readme, name); // refuses a README without the markers
    readme = readme.replace(
      new RegExp(`(<!-- ${name}:start[^>]*-->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`),
      (_all, start: string, end: string) => `${start}\n${generate()}\n\n${end}`,
    );
  }
  writeFileSync(file, readme);
}

if (require.main === module) {
  writeReadme(path.join(__dirname, '..', 'README.md'));
  console.log('README.md: provider tables rewritten (run prettier to align them)');
}
