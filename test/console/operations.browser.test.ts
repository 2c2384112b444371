/**
 * The console's operations pages in Chromium (as console.browser.test.ts: Debian's Chromium through
 * playwright-core, a real gateway in production mode on the embedded database, the fake OpenAI as
 * provider, every other origin refused): Usage (tokens and costs per day per model, key and
 * workspace, drawn by uPlot, with the API's exact sums in its table), the request log (filters, paging,
 * an entry's details, never a prompt), Batches (progress, status, output and error files downloaded,
 * cancel once confirmed) and the playground's tool calls (a whole round trip) and JSON modes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { batchFile, chatLine, jsonl } from '../batches/harness';
import { createIntegration, eventually, type HostedGateway } from '../fine-tuning/harness';
import { workspaceWithKey } from '../usage/harness';
import { gatewayFetch } from '../support/answers';
import { api } from '../support/gateway';
import { answerNextDialog, expectEventually, expectText, screenshot, signIn, startConsoleRig, type ConsoleRig } from './browser';

const SECRET = 'sk-fake-console-operations-key';
/** Words of the prompts: the log and its details must never show them. */
const PROMPT_WORD = 'Zanzibarian';

let rig: ConsoleRig;
let gw: HostedGateway;
let page: Page;
let research: { workspaceId: string; key: string; keyId: string };

beforeAll(async () => {
  rig = await startConsoleRig(
    SECRET,
    (dataDir) => {
      const prices = join(dataDir, 'prices.json');
      // gpt-4o-mini has a price, gpt-4o none: its cost must show as unknown.
      writeFileSync(prices, JSON.stringify({ currency: 'usd', models: { 'gpt-4o-mini': { input: 1, output: 2 } } }));
      return { GATEWAY_PRICES_FILE: prices, GATEWAY_USAGE_FLUSH_MS: '100', GATEWAY_BATCH_POLL_MS: '100' };
    },
    { acceptDownloads: true },
  );
  ({ gw, page } = rig);
  research = await workspaceWithKey(gw, 'research');
  await createIntegration(gw, 'research-openai', SECRET, research.key);
  await page.goto(`${gw.url}/console`);
  await signIn(page, gw.key);
}, 120_000);

afterAll(() => rig?.stop());
// The slowness a test injects ends with it: the delays a cancelled batch leaves unused would hold back the playground's calls.
afterEach(() => rig.fake.clearInjections());

/** Opens a page afresh (a route already shown is loaded again: a hash change alone would keep its old data). */
const goTo = async (route: string) => {
  const url = `${gw.url}/console/#/${route}`;
  await (page.url() === url ? page.reload() : page.goto(url));
  await page.getByRole('heading', { level: 1 }).waitFor();
};

/** A chat call through a stored integration with a key; its HTTP status. */
async function chat(model: string, integration: string, key = gw.key): Promise<number> {
  const res = await api(gw, 'POST', '/v1/chat/completions', {
    body: { model, messages: [{ role: 'user', content: `${PROMPT_WORD} question for ${model}` }] },
    headers: { 'x-gateway-provider': `@${integration}` },
    key,
  });
  return res.status;
}

/** The blue-ish and red-ish pixels uPlot drew on the chart's canvas (its first two series' colours). */
const seriesPixels = () =>
  page.locator('.chart-box canvas').evaluate((canvas: HTMLCanvasElement) => {
    const pixels = canvas.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height).data ?? [];
    let blue = 0;
    let red = 0;
    for (let i = 0; i < pixels.length; i += 4) {
      if (pixels[i + 3] === 0) continue;
      if (pixels[i + 2] > pixels[i] + 60) blue++;
      if (pixels[i] > pixels[i + 2] + 60) red++;
    }
    return { blue, red };
  });

/** The usage table's rows as `{group: [requests, input, cached, output, cost]}`. */
async function usageTable(): Promise<Record<string, string[]>> {
  const rows = await page
    .locator('.usage-table tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) => [tr.querySelector('th')?.textContent?.trim() ?? '', ...Array.from(tr.querySelectorAll('td')).map((td) => td.textContent?.trim() ?? '')]),
    );
  return Object.fromEntries(rows.map(([group, ...cells]) => [group, cells]));
}

describe('the usage and log pages', () => {
  beforeAll(async () => {
    expect(await chat('gpt-4o-mini', 'my-openai')).toBe(200);
    expect(await chat('gpt-4o-mini', 'my-openai')).toBe(200);
    expect(await chat('gpt-4o', 'research-openai', research.key)).toBe(200);
    // The provider does not know this model: a 404 the log shows as an error.
    expect(await chat('no-such-model', 'my-openai')).toBe(404);
    await gw.gateway.services.usage.ledger.flush();
  });

  it('draws tokens per day per model and lists the exact sums of the usage API, with costs where priced', async () => {
    const today = Math.floor(Date.now() / 86_400_000) * 86_400;
    const byModel = (await api(gw, 'GET', `/v1/organization/usage/completions?start_time=${today}&group_by=model`)).body.data[0].results as any[];
    const mini = byModel.find((r) => r.model === 'gpt-4o-mini');
    const big = byModel.find((r) => r.model === 'gpt-4o');
    expect(mini.num_model_requests).toBe(2);

    await goTo('usage');
    await page.locator('.usage-table').waitFor();
    const table = await usageTable();
    expect(table['gpt-4o-mini']).toEqual(['2', String(mini.input_tokens), '0', String(mini.output_tokens), expect.stringMatching(/^\$0\.0000\d+$/)]);
    // Priced at 1 and 2 per million tokens.
    const cost = (mini.input_tokens * 1 + mini.output_tokens * 2) / 1e6;
    expect(Number(table['gpt-4o-mini'][4].slice(1))).toBeCloseTo(cost, 10);
    expect(table['gpt-4o']).toEqual(['1', String(big.input_tokens), '0', String(big.output_tokens), 'unknown']);
    const chart = page.locator('.chart-box');
    await chart.locator('canvas').waitFor();
    expect(await chart.getAttribute('data-series')).toBe(String(Object.keys(table).length));
    const drawn = await seriesPixels();
    expect(drawn.blue).toBeGreaterThan(20);
    expect(drawn.red).toBeGreaterThan(20);
    await screenshot(page, '20-usage-models');
  });

  it('groups by API key and by workspace, and narrows to one workspace', async () => {
    const keys = (await api(gw, 'GET', '/v1/api-keys')).body.data as { id: string; name: string; prefix: string }[];
    const researchKey = keys.find((k) => k.id === research.keyId)!;
    await goTo('usage');
    await page.getByLabel('Group by').selectOption('api_key_id');
    await expectText(page.locator('.usage-table tbody'), new RegExp(`research key \\(${researchKey.prefix}…\\)`));
    expect(Object.keys(await usageTable())).toHaveLength(2);

    await page.getByLabel('Group by').selectOption('project_id');
    await expectText(page.locator('.usage-table tbody'), /research/);
    const today = Math.floor(Date.now() / 86_400_000) * 86_400;
    const expected = (await api(gw, 'GET', `/v1/organization/usage/completions?start_time=${today}&group_by=project_id`)).body.data[0].results as any[];
    const workspaces = (await api(gw, 'GET', '/v1/admin/workspaces')).body.data as { id: string; name: string }[];
    const byWorkspace = await usageTable();
    expect(Object.keys(byWorkspace).sort()).toEqual(['Default workspace', 'research']);
    for (const r of expected) {
      const name = workspaces.find((w) => w.id === r.project_id)!.name;
      expect(byWorkspace[name].slice(0, 4)).toEqual([r.num_model_requests, r.input_tokens, 0, r.output_tokens].map(String));
    }

    await page.getByLabel('Workspaces').selectOption({ label: 'research' });
    await expectEventually(async () => Object.keys(await usageTable()), ['research']);
    await screenshot(page, '21-usage-workspace');
  });

  it('shows a workspace key its own usage only', async () => {
    const other = await rig.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const own = await other.newPage();
    await own.goto(`${gw.url}/console/#/usage`);
    await own.getByLabel('API key').fill(research.key);
    await own.getByLabel('API key').press('Enter');
    await own.locator('.usage-table').waitFor();
    const groups = await own.locator('.usage-table tbody th').allTextContents();
    expect(groups).toEqual(['gpt-4o']);
    // A workspace key has no workspace list to narrow by.
    await expect(own.getByLabel('Workspaces').count()).resolves.toBe(0);
    await other.close();
  });

  it('lists the log newest first, filters it, and opens an entry without any prompt text', async () => {
    await goTo('logs');
    const rows = page.locator('.log-table tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(4);
    await expectText(rows.first(), /404.*no-such-model/s);

    await page.getByLabel('Model').fill('gpt-4o');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expectEventually(() => rows.count(), 1);
    await expectText(rows.first().locator('td.model'), /^gpt-4o$/);
    await expectText(rows.first().locator('.status'), /^200$/);

    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Status').selectOption('error');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expectEventually(() => rows.count(), 1);
    await expectText(rows.first(), /404/);

    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('API key id').fill(research.keyId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expectEventually(() => rows.count(), 1);
    await screenshot(page, '22-logs-filtered');

    const entry = (await api(gw, 'GET', `/v1/logs?api_key_id=${research.keyId}`)).body.data[0];
    await rows.first().getByRole('link').click();
    await page.getByRole('heading', { name: 'Log entry' }).waitFor();
    const details = page.getByTestId('log-entry');
    await expectText(details, new RegExp(`^Id${entry.id}`));
    const text = (await details.textContent()) ?? '';
    expect(text).toContain(`Input tokens${entry.input_tokens} (0 cached)`);
    expect(text).toContain(`Provider request id${entry.provider_request_id}`);
    expect(text).toContain(`API key${research.keyId}`);
    expect(await page.content()).not.toContain(PROMPT_WORD);
    await screenshot(page, '23-log-entry');
    // An id the key cannot see (or that never was) says so.
    await goTo('logs/999999');
    await expectText(page.locator('main'), /No log entry 999999/);
  });

  it('pages the log with "Older entries"', async () => {
    for (let i = 0; i < 50; i++) expect(await chat('gpt-4o-mini', 'my-openai')).toBe(200);
    await gw.gateway.services.usage.ledger.flush();
    await goTo('logs');
    const rows = page.locator('.log-table tbody tr');
    await expectEventually(() => rows.count(), 50);
    await page.getByRole('button', { name: 'Older entries' }).click();
    await expectEventually(() => rows.count(), 54);
    await expect(page.getByRole('button', { name: 'Older entries' }).count()).resolves.toBe(0);
  });
});

/** A batch created through the REST face from `content`; its id. */
async function createBatch(content: string): Promise<string> {
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([content]), 'requests.jsonl');
  const file = await (await gatewayFetch(`${gw.url}/v1/files`, { method: 'POST', headers: { 'x-gateway-api-key': gw.key }, body: form })).json();
  // The gateway's own runner (OpenAI's batch service would be the default): the fake answers each line as a chat call.
  const gatewayOptions = { 'x-gateway-provider': '@my-openai', 'x-gateway-batch-runner': 'gateway' };
  const batch = await api(gw, 'POST', '/v1/batches', {
    body: { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', gateway_options: gatewayOptions },
  });
  expect(batch.status).toBe(200);
  return batch.body.id;
}

const batchStatus = async (id: string) => (await api(gw, 'GET', `/v1/batches/${id}`)).body.status as string;

describe('the batches page', () => {
  const row = (id: string) => page.locator(`tr[data-batch="${id}"]`);

  it('shows progress and status, and downloads the output and error files', async () => {
    const done = await createBatch(batchFile('gpt-4o-mini', 4));
    const refused = await createBatch(jsonl([chatLine('bad-1', 'no-such-model'), chatLine('bad-2', 'no-such-model')]));
    await goTo('batches');
    // The page polls while a batch runs: both end up completed without a reload.
    await expectText(row(done).locator('.status'), /^completed$/, 20_000);
    await expectText(row(refused).locator('.status'), /^completed$/, 20_000);
    await expectText(row(done).locator('.progress-cell'), /^4 of 4 requests done$/);
    await expectText(row(refused).locator('.progress-cell'), /^2 of 2 requests done, 2 failed$/);
    expect(
      await row(done)
        .locator('progress')
        .evaluate((p: HTMLProgressElement) => [p.value, p.max]),
    ).toEqual([4, 4]);
    await screenshot(page, '24-batches');

    const output = await download(row(done).getByRole('button', { name: `Output of ${done}` }));
    expect(output.name).toBe(`${done}-output.jsonl`);
    expect(output.lines.map((l) => l.custom_id).sort()).toEqual(['request-1', 'request-2', 'request-3', 'request-4']);
    expect(output.lines.every((l) => l.response.status_code === 200)).toBe(true);
    await expect(
      row(done)
        .getByRole('button', { name: `Errors of ${done}` })
        .count(),
    ).resolves.toBe(0);

    const errors = await download(row(refused).getByRole('button', { name: `Errors of ${refused}` }));
    expect(errors.lines.map((l) => l.custom_id).sort()).toEqual(['bad-1', 'bad-2']);
    // Finished batches offer no cancel.
    await expect(
      row(done)
        .getByRole('button', { name: `Cancel ${done}` })
        .count(),
    ).resolves.toBe(0);
  }, 60_000);

  it('cancels a running batch once confirmed', async () => {
    // The provider answers slowly: the batch stays in progress while the page cancels it.
    rig.fake.delayNext('POST', '/v1/chat/completions', 3000, 8);
    const running = await createBatch(batchFile('gpt-4o-mini', 3));
    await goTo('batches');
    const cancel = row(running).getByRole('button', { name: `Cancel ${running}` });
    await cancel.waitFor();
    const asked = answerNextDialog(page, false);
    await cancel.click();
    expect(await asked).toMatch(new RegExp(`^Cancel batch ${running}\\?`));
    expect(await batchStatus(running)).not.toMatch(/^cancel/);
    void answerNextDialog(page, true);
    await cancel.click();
    await expectText(row(running).locator('.status'), /^cancel(ling|led)$/);
    await eventually(async () => ((await batchStatus(running)) === 'cancelled' ? true : undefined), 20_000);
    await expectText(row(running).locator('.status'), /^cancelled$/, 20_000);
    await cancel.waitFor({ state: 'detached' });
  }, 60_000);
});

/** Clicks a download button; the file's name and JSON lines. */
async function download(button: ReturnType<Page['locator']>): Promise<{ name: string; lines: any[] }> {
  const [file] = await Promise.all([page.waitForEvent('download'), button.click()]);
  const text = readFileSync(await file.path(), 'utf8');
  return {
    name: file.suggestedFilename(),
    lines: text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line)),
  };
}

describe("the playground's tools and JSON modes", () => {
  /** The body of the fake's latest chat request. */
  const lastChatBody = () => rig.fake.state.chatRequests.at(-1)!.body as Record<string, any>;

  const openPlayground = async () => {
    await goTo('playground');
    await page.getByLabel("A provider's model through an integration").check();
    await page.getByLabel('Integration', { exact: true }).selectOption('my-openai');
    await page.getByLabel("Provider's model id").fill('gpt-4o-mini');
  };

  it('offers a function tool, shows the call the model streams, and sends its result back for the final answer', async () => {
    await openPlayground();
    await page.getByLabel('Text of message 1').fill('Weather in Paris?');
    await page.getByRole('button', { name: 'Add a function tool' }).click();
    await page.getByLabel('Name of tool 1').waitFor();
    expect(await page.getByLabel('Name of tool 1').inputValue()).toBe('get_weather');
    await page.getByLabel('Tool choice').selectOption('function:get_weather');
    const sent = rig.fake.state.chatRequests.length;
    await page.getByRole('button', { name: 'Send' }).click();
    const calls = page.getByTestId('tool-calls');
    await expectText(calls, /^get_weather call_/);
    // The fake fills string arguments with the user's text.
    await expectText(calls.locator('pre'), /^\{\s*"city": "Weather in Paris\?"\s*\}$/);
    expect(rig.fake.state.chatRequests.length).toBe(sent + 1);
    expect(lastChatBody()).toMatchObject({
      stream: true,
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'The current weather of a city', parameters: { required: ['city'] } } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    const callId = (await calls.locator('li .muted').textContent())!;
    await screenshot(page, '26-playground-tool-call');

    await page.getByRole('button', { name: 'Answer the tool calls' }).click();
    await page.getByLabel(`Result of get_weather (${callId}), message 3`).fill('Sunny, 21 degrees');
    await page.getByLabel('Tool choice').selectOption('auto');
    await page.getByRole('button', { name: 'Send' }).click();
    await expectText(page.getByTestId('answer'), /^Answer from gpt-4o-mini: Sunny, 21 degrees$/);
    expect(lastChatBody().messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: callId, type: 'function', function: { name: 'get_weather', arguments: expect.any(String) } }] },
      { role: 'tool', tool_call_id: callId, content: 'Sunny, 21 degrees' },
    ]);
    expect(lastChatBody().tool_choice).toBe('auto');
    await expect(page.getByTestId('tool-calls').count()).resolves.toBe(0);
    await screenshot(page, '27-playground-tool-answer');
  });

  it('asks for a JSON object or JSON following a schema, and shows the answer parsed', async () => {
    await openPlayground();
    await page.getByLabel('Text of message 1').fill('Say hello in JSON');
    await page.getByLabel('JSON mode').selectOption('json_object');
    await page.getByRole('button', { name: 'Send' }).click();
    await expectText(page.getByTestId('answer-json'), /^Valid JSON/);
    expect(JSON.parse((await page.getByTestId('answer').textContent())!)).toEqual({ answer: 'Answer from gpt-4o-mini: Say hello in JSON' });
    expect(lastChatBody().response_format).toEqual({ type: 'json_object' });

    await page.getByLabel('JSON mode').selectOption('json_schema');
    await page.getByLabel('Schema name').fill('greeting');
    const schema = { type: 'object', properties: { greeting: { type: 'string' } }, required: ['greeting'], additionalProperties: false };
    await page.getByLabel('Schema (JSON Schema)').fill(JSON.stringify(schema));
    await page.getByLabel('Strict').check();
    await page.getByRole('button', { name: 'Send' }).click();
    await expectText(page.getByTestId('answer-json'), /"greeting":/);
    expect(Object.keys(JSON.parse((await page.getByTestId('answer').textContent())!))).toEqual(['greeting']);
    expect(lastChatBody().response_format).toEqual({ type: 'json_schema', json_schema: { name: 'greeting', schema, strict: true } });
    await screenshot(page, '28-playground-json-schema');

    // A schema that is not JSON is caught before anything is sent.
    const sent = rig.fake.state.chatRequests.length;
    await page.getByLabel('Schema (JSON Schema)').fill('{"type": ');
    await page.getByRole('button', { name: 'Send' }).click();
    await expectText(page.getByRole('alert'), /^The response schema is not JSON/);
    expect(rig.fake.state.chatRequests.length).toBe(sent);
  });
});

describe('the new pages', () => {
  it('fit a phone width with every control labelled, and asked no other origin for anything', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const route of ['usage', 'logs', 'batches', 'playground']) {
      await goTo(route);
      await page.waitForLoadState('networkidle');
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      const unlabelled = await page.evaluate(() =>
        Array.from(document.querySelectorAll('input, select, textarea'))
          .filter((el) => (el as HTMLInputElement).labels?.length === 0 && !el.getAttribute('aria-label'))
          .map((el) => el.outerHTML),
      );
      expect(unlabelled).toEqual([]);
      await screenshot(page, `25-phone-${route}`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(rig.foreignRequests).toEqual([]);
  });
});
