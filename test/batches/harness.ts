/** What the batch tests share: input files in OpenAI's `BatchRequestInput` lines, and reading output lines. */
import { toFile } from 'openai';
import type OpenAI from 'openai';

export const chatLine = (customId: string, model: string, content = `Question ${customId}`, body: Record<string, unknown> = {}) => ({
  custom_id: customId,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model, messages: [{ role: 'user', content }], ...body },
});

export const jsonl = (lines: readonly unknown[]) => lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n';

/** A batch file of `count` requests for `model`. */
export const batchFile = (model: string, count: number) => jsonl(Array.from({ length: count }, (_, i) => chatLine(`request-${i + 1}`, model)));

export async function uploadBatchFile(client: OpenAI, content: string) {
  return client.files.create({ file: await toFile(Buffer.from(content), 'requests.jsonl'), purpose: 'batch' });
}
