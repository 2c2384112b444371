/**
 * Hosted mode for the chat benchmarks (chat.ts, peer.ts): an integration holding the fake's key, a
 * hosted fine-tuning job run to `succeeded` through the gateway and the fake (the gateway's job
 * monitor does the work), and a workspace API key to call its model with.
 */

/** A call to the gateway: a JSON body, or a multipart form; fails loudly on anything but 200. */
export async function call(
  port: number,
  key: string,
  method: string,
  route: string,
  body?: Record<string, unknown> | FormData,
): Promise<Record<string, unknown>> {
  const form = body instanceof FormData;
  const res = await fetch(`http://127.0.0.1:${port}${route}`, {
    method,
    headers: { 'x-gateway-api-key': key, ...(body === undefined || form ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined || form ? body : JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`${method} ${route}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** Runs a hosted job through the gateway (organisation key `key`) and the fake (API key `providerKey`) to succeeded; its fine-tuned model. */
export async function fineTunedModel(port: number, key: string, providerKey: string): Promise<string> {
  await call(port, key, 'POST', '/v1/integrations', { slug: 'bench', provider: 'openai', credentials: { api_key: providerKey } });
  const example = JSON.stringify({
    messages: [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
    ],
  });
  const form = new FormData();
  form.append('purpose', 'fine-tune');
  form.append('file', new Blob([Array.from({ length: 10 }, () => example).join('\n')]), 'bench.jsonl');
  const file = await call(port, key, 'POST', '/v1/files', form);
  const job = { model: 'gpt-4o-mini-2024-07-18', training_file: file.id, gateway_options: { 'x-gateway-provider': '@bench' } };
  const { id } = await call(port, key, 'POST', '/v1/fine_tuning/jobs', job);
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    const state = await call(port, key, 'GET', `/v1/fine_tuning/jobs/${String(id)}`);
    if (state.status === 'succeeded') return String(state.fine_tuned_model);
    if (state.status === 'failed' || state.status === 'cancelled') throw new Error(`bench job ${state.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('bench job did not finish');
}

/** A key of the default workspace: applications call with one (an organisation key costs a workspace lookup more). */
export async function workspaceKey(port: number, key: string): Promise<string> {
  return String((await call(port, key, 'POST', '/v1/api-keys', { name: 'bench', workspace_id: 'default' })).key);
}
