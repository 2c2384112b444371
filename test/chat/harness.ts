/** What the chat tests share: a hosted job driven to succeeded, and a raw SSE reader. */
import { toFile } from 'openai';
import type OpenAI from 'openai';
import { dataset, eventually } from '../fine-tuning/harness';

/** Uploads a dataset, creates a hosted job on `integration` and waits until it has succeeded. */
export async function succeededJob(client: OpenAI, integration: string, body: Record<string, unknown> = {}) {
  const file = await client.files.create({ file: await toFile(Buffer.from(dataset()), 'train.jsonl'), purpose: 'fine-tune' });
  const created = await client.fineTuning.jobs.create({
    model: 'gpt-4o-mini-2024-07-18',
    training_file: file.id,
    gateway_options: { 'x-gateway-provider': integration },
    ...body,
  } as never);
  const done = await eventually(async () => {
    const job = await client.fineTuning.jobs.retrieve(created.id);
    return job.status === 'succeeded' || job.status === 'failed' ? job : undefined;
  }, 30_000);
  if (done.status !== 'succeeded' || !done.fine_tuned_model) throw new Error(`job did not succeed: ${JSON.stringify(done)}`);
  return { id: done.id, model: done.fine_tuned_model };
}

/** The `data:` payloads of a server-sent event stream, read to its end. */
export async function sseData(res: Response): Promise<string[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length));
}

/** The text a stream of chat.completion.chunk objects spells out. */
export async function streamedText(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return { text: chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), chunks };
}
