/**
 * The console in a real browser (Debian's Chromium through playwright-core) against a real gateway in
 * production mode on the embedded database, whose provider is the fake OpenAI server: sign in, upload a
 * dataset (a refused one first) and delete a file, start a hosted job and watch it succeed with its loss
 * curve drawn, cancel another (after a confirmation), tell failed, cancelled and retrying jobs apart,
 * chat in the playground (streamed), create, compare and delete partials, edit and delete a label,
 * switch workspace. Requests to any other origin are refused and recorded: the page must work offline.
 * Screenshots go to test/console/screenshots/ (git-ignored).
 */
import { gzipSync } from 'node:zlib';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { gatewayFetch } from '../support/answers';
import { api } from '../support/gateway';
import { closedPort, createIntegration, dataset, type HostedGateway } from '../fine-tuning/harness';
import {
  CONSOLE_DIST,
  SCREENSHOTS,
  answerNextDialog as nextDialog,
  expectEventually,
  expectText,
  screenshot,
  signIn,
  startConsoleRig,
  type ConsoleRig,
} from './browser';

const SECRET = 'sk-fake-console-provider-key';

let rig: ConsoleRig;
let gw: HostedGateway;
let page: Page;
/** Everything the page logged (must never hold the key). */
const consoleLines: string[] = [];
/** Every URL the page requested. */
const sentUrls: string[] = [];

beforeAll(async () => {
  const togetherUrl = `http://127.0.0.1:${await closedPort()}/v1`;
  // Together AI at a closed port: a job there keeps retrying (the deadline is the default 15 min).
  rig = await startConsoleRig(SECRET, () => ({ GATEWAY_JOB_POLL_MS: '100', GATEWAY_TOGETHER_BASE_URL: togetherUrl }));
  ({ gw, page } = rig);
  await createIntegration(gw, 'wrong-key', 'sk-not-the-fakes-key');
  await api(gw, 'POST', '/v1/integrations', { body: { slug: 'unreachable', provider: 'together-ai', credentials: { api_key: 'tg-key-0123456789abcdef' } } });
  page.on('console', (message) => void consoleLines.push(message.text()));
  page.on('request', (request) => void sentUrls.push(request.url()));
}, 120_000);

afterAll(() => rig?.stop());
// The slowness a test injects ends with it: an upload still held back would keep the job monitor from the next test's jobs.
afterEach(() => rig.fake.clearInjections());

const goTo = async (route: string) => {
  await page.goto(`${gw.url}/console/#/${route}`);
  await page.getByRole('heading', { level: 1 }).waitFor();
};

describe('the console in Chromium', () => {
  it('loads with no other origin, refuses a wrong key and signs in with a pasted key', async () => {
    await page.goto(`${gw.url}/console`);
    await page.getByLabel('API key').fill('gw_wrong_key_0123456789abcdef');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectText(page.getByRole('alert'), /API key/i);
    await signIn(page, gw.key);
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([gw.key]);
    expect(await page.evaluate(() => JSON.stringify(localStorage))).not.toContain(gw.key);
    await screenshot(page, '01-jobs-empty');
  });

  it('shows the line errors of a refused dataset, then uploads a good one with a progress bar', async () => {
    await goTo('files');
    const bad = 'not json\n' + dataset(11).split('\n').slice(1).join('\n') + '{"messages": [{"role": "user", "content": "no answer"}]}\n';
    await page.getByLabel('File', { exact: true }).setInputFiles({ name: 'bad.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(bad) });
    await page.getByRole('button', { name: 'Upload' }).click();
    const errors = page.locator('.line-errors li');
    await errors.first().waitFor();
    const lines = await errors.allTextContents();
    expect(lines[0]).toMatch(/^line 1: /);
    expect(lines.some((l) => l.startsWith('line 12: '))).toBe(true);
    await screenshot(page, '02-files-refused');

    await page.getByLabel('File', { exact: true }).setInputFiles({ name: 'train.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(dataset(40)) });
    await page.getByRole('button', { name: 'Upload' }).click();
    await expectText(page.getByRole('status'), /Uploaded train\.jsonl as /);
    await page.getByRole('cell', { name: 'train.jsonl', exact: true }).waitFor();
    await screenshot(page, '03-files-uploaded');
  });

  it('deletes a file once confirmed', async () => {
    const spare = await uploadThroughApi('spare.jsonl');
    await goTo('files');
    await page.reload(); // the page was already there: it lists the file uploaded meanwhile
    const button = page.getByRole('button', { name: `Delete spare.jsonl (${spare})` });
    const asked = answerNextDialog(false);
    await button.click();
    expect(await asked).toMatch(/^Delete spare\.jsonl/);
    expect((await api(gw, 'GET', `/v1/files/${spare}`)).status).toBe(200);
    void answerNextDialog(true);
    await button.click();
    await button.waitFor({ state: 'detached' });
    expect((await api(gw, 'GET', `/v1/files/${spare}`)).status).toBe(404);
  });

  it('starts a hosted job and follows it to succeeded with the loss curve drawn', async () => {
    await goTo('jobs');
    const trainingFile = await page.locator('#job-file option', { hasText: 'train.jsonl' }).getAttribute('value');
    await page.getByLabel('Training file').selectOption(trainingFile ?? '');
    await page.getByLabel('Suffix (optional)').fill('console');
    await page.getByRole('button', { name: 'Start job' }).click();
    await page.getByRole('heading', { name: 'Fine-tuning job' }).waitFor();
    await expectText(page.getByTestId('job-status'), /succeeded/, 30_000);
    // The fake reports checkpoints at steps 10, 20 and 30 with falling loss.
    const chart = page.locator('.chart-box');
    await chart.locator('canvas').waitFor();
    expect(await chart.getAttribute('data-points')).toBe('3');
    const drawn = await chart.locator('canvas').evaluate((canvas: HTMLCanvasElement) => {
      const pixels = canvas.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height).data ?? [];
      let coloured = 0;
      for (let i = 0; i < pixels.length; i += 4) if (pixels[i + 3] > 0 && pixels[i + 2] > pixels[i] + 60) coloured++;
      return coloured;
    });
    expect(drawn).toBeGreaterThan(50); // blue pixels of the curve
    expect(await page.locator('.loss-table tbody tr').allTextContents()).toEqual(['100.9', '200.65', '300.4']);
    await expect(page.locator('.timeline li').allTextContents()).resolves.toEqual(
      expect.arrayContaining([expect.stringContaining('The job has successfully completed')]),
    );
    await screenshot(page, '04-job-succeeded');
    await goTo('jobs');
    await expectText(page.locator('tbody tr').first(), /succeeded.*openai/s);
  }, 60_000);

  it('cancels a job from its page while it runs, once confirmed', async () => {
    // The provider takes its time to receive the dataset: the job stays in validating_files meanwhile.
    rig.fake.delayNext('POST', '/v1/files', 4000);
    await goTo('jobs');
    await page.getByRole('button', { name: 'Start job' }).click();
    await page.getByRole('heading', { name: 'Fine-tuning job' }).waitFor();
    const cancels = () => sentUrls.filter((url) => url.endsWith('/cancel')).length;
    const asked = answerNextDialog(false);
    await page.getByRole('button', { name: 'Cancel job' }).click();
    expect(await asked).toMatch(/^Cancel this fine-tuning job\?/);
    expect(cancels()).toBe(0);
    void answerNextDialog(true);
    await page.getByRole('button', { name: 'Cancel job' }).click();
    await expectText(page.getByTestId('job-status'), /cancelled/);
    expect(cancels()).toBe(1);
    await expect(page.getByRole('button', { name: 'Cancel job' }).count()).resolves.toBe(0);
    await screenshot(page, '05-job-cancelled');
  }, 30_000);

  it('tells failed, cancelled and retrying jobs apart, with why a job is retrying', async () => {
    const trainingFile = (await api(gw, 'GET', '/v1/files?purpose=fine-tune')).body.data[0].id;
    const start = async (integration: string) =>
      (
        await api(gw, 'POST', '/v1/fine_tuning/jobs', {
          body: { model: 'some-model', training_file: trainingFile, gateway_options: { 'x-gateway-provider': integration } },
        })
      ).body.id as string;
    const failing = await start('@wrong-key');
    const retrying = await start('@unreachable');
    await goTo('jobs');
    const badge = (id: string, status: string) => page.locator('tbody tr', { has: page.locator(`a[href="#/jobs/${id}"]`) }).locator(`.status-${status}`);
    await badge(failing, 'failed').waitFor();
    const retryBadge = badge(retrying, 'retrying');
    await retryBadge.waitFor({ timeout: 15_000 });
    await expectText(retryBadge, /^retrying: provider unreachable/);
    expect(await retryBadge.getAttribute('title')).toBe('Could not reach Together AI (ECONNREFUSED)');
    const look = (locator: ReturnType<Page['locator']>) =>
      locator.first().evaluate((el) => {
        const style = getComputedStyle(el);
        return [style.color, style.backgroundColor, style.borderStyle].join(' ');
      });
    const [failed, cancelled, validating] = await Promise.all([
      look(page.locator('.status-failed')),
      look(page.locator('.status-cancelled')),
      look(page.locator('.status-validating_files')),
    ]);
    expect(new Set([failed, cancelled, validating, await look(retryBadge)]).size).toBe(4);
    await screenshot(page, '05b-jobs-badges');
    await goTo(`jobs/${retrying}`);
    await expectText(
      page.getByTestId('retry-note'),
      /^Could not reach Together AI \(ECONNREFUSED\)\. Failed attempts in a row: \d+; next attempt .+ The job fails at /,
    );
    await api(gw, 'POST', `/v1/fine_tuning/jobs/${retrying}/cancel`);
  }, 30_000);

  it('streams a chat answer of the tuned model in the playground, with a partial previewed', async () => {
    await api(gw, 'POST', '/v1/prompts/partials', { body: { name: 'tone', string: 'Be brief.' } });
    const models = await api(gw, 'GET', '/v1/models');
    const tuned: string = models.body.data[0].id;
    await goTo('playground');
    await page.getByLabel('Model', { exact: true }).selectOption(tuned);
    await page.getByLabel('Text of message 1').fill('{{>tone}} What is a gateway?');
    await expectText(page.getByLabel('Preview of message 1'), /Be brief\. What is a gateway\?/);
    // Chunks 80 ms apart: the answer must show up piece by piece, not at once.
    rig.fake.setStreamDelay(80);
    const seen = new Set<string>();
    const watching = watchText(page.getByTestId('answer'), seen);
    await page.getByRole('button', { name: 'Send' }).click();
    await expectText(page.getByTestId('answer'), new RegExp(`Answer from ${escape(tuned)}: Be brief\\. What is a gateway\\?`));
    watching.stop();
    rig.fake.setStreamDelay(0);
    const final = `Answer from ${tuned}: Be brief. What is a gateway?`;
    const partial = [...seen].filter((text) => text !== '' && text !== final);
    expect(partial.length).toBeGreaterThan(1);
    for (const text of partial) expect(final.startsWith(text)).toBe(true);
    await screenshot(page, '06-playground');
  });

  it("chats with a provider's model through an integration (client mode) in the playground", async () => {
    await goTo('playground');
    await page.getByLabel("A provider's model through an integration").check();
    await page.getByLabel('Integration', { exact: true }).selectOption('my-openai');
    await page.getByLabel("Provider's model id").fill('gpt-4o-mini');
    await page.getByLabel('Text of message 1').fill('Hello there');
    await page.getByRole('button', { name: 'Send' }).click();
    await expectText(page.getByTestId('answer'), /^Answer from gpt-4o-mini: Hello there$/);
  });

  it('compares two partial versions and makes the newer one default', async () => {
    const created = await api(gw, 'POST', '/v1/prompts/partials', { body: { name: 'greeting', string: 'Hello.\nBe polite.' } });
    await api(gw, 'PUT', `/v1/prompts/partials/${created.body.slug}`, { body: { string: 'Hello.\nBe very polite.' } });
    await goTo(`partials/${created.body.slug}`);
    await expectText(page.getByTestId('default-version'), /^1$/);
    await expectText(page.locator('.diff-removed'), /Be polite\./);
    await expectText(page.locator('.diff-added'), /Be very polite\./);
    await page.getByRole('button', { name: 'Make version 2 default' }).click();
    await expectText(page.getByTestId('default-version'), /^2$/);
    expect((await api(gw, 'GET', `/v1/prompts/partials/${created.body.slug}`)).body.version).toBe(2);
    await screenshot(page, '07-partials');
  });

  it('creates a partial, then deletes it once confirmed', async () => {
    await goTo('partials');
    await page.getByText('New partial').click();
    await page.getByLabel('Name', { exact: true }).fill('Farewell');
    await page.getByLabel('Text', { exact: true }).fill('Goodbye for now.');
    await page.getByRole('button', { name: 'Create partial' }).click();
    await page.getByRole('heading', { name: 'Farewell', level: 2 }).waitFor();
    expect(page.url()).toMatch(/#\/partials\/farewell$/);
    expect((await api(gw, 'GET', '/v1/prompts/partials/farewell')).body.string).toBe('Goodbye for now.');
    void answerNextDialog(true);
    await page.getByRole('button', { name: 'Delete partial Farewell' }).click();
    await page.getByRole('link', { name: 'Farewell' }).waitFor({ state: 'detached' });
    expect((await api(gw, 'GET', '/v1/prompts/partials/farewell')).status).toBe(404);
  });

  it('creates a label and edits its colour', async () => {
    await goTo('labels');
    await page.getByLabel('Name', { exact: true }).fill('reviewed');
    await page.getByLabel('Colour', { exact: true }).fill('#aa3300');
    await page.getByRole('button', { name: 'Create label' }).click();
    await page.getByLabel('Colour of reviewed').fill('#0055aa');
    await page.getByRole('button', { name: 'Save colour of reviewed' }).click();
    await expectEventually(async () => {
      const list = await api(gw, 'GET', '/v1/labels?search=reviewed');
      return list.body.data[0]?.color_code;
    }, '#0055aa');
    await screenshot(page, '08-labels');
    // The universal labels cannot be deleted, so they offer no button; the new one goes once confirmed.
    await expect(page.getByRole('button', { name: 'Delete production' }).count()).resolves.toBe(0);
    void answerNextDialog(true);
    await page.getByRole('button', { name: 'Delete reviewed' }).click();
    await page.getByText('reviewed', { exact: true }).waitFor({ state: 'detached' });
    expect((await api(gw, 'GET', '/v1/labels?search=reviewed')).body.data).toEqual([]);
  });

  it('switches an organisation key to another of its workspaces, and every call names it', async () => {
    const research = (await api(gw, 'POST', '/v1/admin/workspaces', { body: { name: 'Research', slug: 'research' } })).body;
    await api(gw, 'POST', '/v1/labels?workspace_id=research', { body: { name: 'research-only' } });
    await goTo('labels');
    await page.reload(); // the switcher lists the workspaces as they were when the page loaded
    await expect(page.getByText('research-only', { exact: true }).count()).resolves.toBe(0);
    await page.getByLabel('Workspace').selectOption({ label: 'Research (research)' });
    await page.getByText('research-only', { exact: true }).waitFor();
    expect(sentUrls).toContainEqual(expect.stringContaining(`/v1/labels?page_size=100&workspace_id=${research.id}`));
    // GraphQL too: the jobs, all in the default workspace, are not there.
    await goTo('jobs');
    await page.getByText('No fine-tuning job yet.').waitFor();
    await screenshot(page, '08b-workspace');
    await page.getByLabel('Workspace').selectOption({ label: 'Default workspace (default)' });
    await page.locator('tbody tr').first().waitFor();
  });

  it('fits a phone width and opens the bundled GraphQL explorer', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const route of ['jobs', 'files', 'partials', 'labels', 'playground']) {
      await goTo(route);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      if (route === 'jobs') {
        // The jobs table keeps its model and created columns on screen, without scrolling sideways.
        await screenshot(page, '09a-phone-jobs');
        for (const name of ['Model', 'Created']) {
          const box = await page.getByRole('columnheader', { name }).boundingBox();
          expect(box!.width).toBeGreaterThan(0);
          expect(box!.x + box!.width).toBeLessThanOrEqual(390);
        }
        expect(await page.locator('.table-wrap').evaluate((el) => el.scrollWidth - el.clientWidth)).toBe(0);
      }
      // Every form control has an accessible name (a label element or aria-label).
      const unlabelled = await page.evaluate(() =>
        Array.from(document.querySelectorAll('input, select, textarea'))
          .filter((el) => (el as HTMLInputElement).labels?.length === 0 && !el.getAttribute('aria-label'))
          .map((el) => el.outerHTML),
      );
      expect(unlabelled).toEqual([]);
    }
    await screenshot(page, '09-phone-playground');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${gw.url}/console/explorer.html`);
    // GraphiQL loads its editors lazily: run the query once the query editor is up.
    await expectText(page.locator('.graphiql-query-editor .CodeMirror-code'), /fineTuningJobs\(limit: 10\)/);
    await page.locator('.graphiql-execute-button').click();
    await expectText(page.locator('.graphiql-response'), /"fineTuningJobs"/);
    await screenshot(page, '10-explorer');
  });

  it('never put the key in a URL or a log line, and asked no other origin for anything', () => {
    expect(rig.foreignRequests).toEqual([]);
    expect(page.url()).not.toContain(gw.key);
    expect(consoleLines.join('\n')).not.toContain(gw.key);
    expect(gw.logs.join('\n')).not.toContain(gw.key);
  });

  // The first-load time is recorded in report.json, not asserted: timings belong in benchmarks, not tests.
  it('meets the size budget (≤ 300 KB gzipped) and records the first-load time', async () => {
    const html = readFileSync(join(CONSOLE_DIST, 'index.html'), 'utf8');
    const assets = [...html.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThan(0);
    const gzipped = assets.reduce((sum, file) => sum + gzipSync(readFileSync(join(CONSOLE_DIST, file))).length, 0);
    const fresh = await rig.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const first = await fresh.newPage();
    const started = Date.now();
    await first.goto(`${gw.url}/console`);
    await first.getByLabel('API key').waitFor();
    const firstLoadMs = Date.now() - started;
    await fresh.close();
    const report = { mainBundleGzipBytes: gzipped, files: assets, firstLoadMs, allAssets: readdirSync(join(CONSOLE_DIST, 'assets')).length };
    writeFileSync(join(SCREENSHOTS, 'report.json'), JSON.stringify(report, null, 2));
    expect(gzipped).toBeLessThanOrEqual(300 * 1024);
  });
});

/** Records every distinct text the element shows until stopped (sampling every 10 ms). */
function watchText(locator: ReturnType<Page['locator']>, seen: Set<string>): { stop(): void } {
  let running = true;
  void (async () => {
    while (running) {
      seen.add(((await locator.textContent().catch(() => null)) ?? '').trim());
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    stop: () => {
      running = false;
    },
  };
}

const answerNextDialog = (accept: boolean) => nextDialog(page, accept);

/** A dataset uploaded through the REST face (not the page); its id. */
async function uploadThroughApi(filename: string): Promise<string> {
  const form = new FormData();
  form.append('purpose', 'fine-tune');
  form.append('file', new Blob([dataset()]), filename);
  const res = await gatewayFetch(`${gw.url}/v1/files`, { method: 'POST', headers: { 'x-gateway-api-key': gw.key }, body: form });
  return ((await res.json()) as { id: string }).id;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
