/**
 * Browser-test support: Debian's Chromium driven by playwright-core, the console's build, screenshots
 * to a git-ignored folder.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Locator, type Page } from 'playwright-core';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server';
import { createIntegration, createTestDatabase, newKey, startHostedGateway, tempDir, type HostedGateway } from '../fine-tuning/harness';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ROOT = join(__dirname, '..', '..');
export const CONSOLE_DIST = join(ROOT, 'console', 'dist');
export const SCREENSHOTS = join(__dirname, 'screenshots');

/** A missing browser fails the suite with what to do: a skipped browser test would hide a broken console. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's package (apt-get install -y chromium) or set CHROMIUM_PATH`);
  }
  // Root cannot use Chromium's sandbox; the tests only open the local gateway.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

/**
 * A desktop-sized context that reaches `origin` only: the console must work offline, so every other
 * request is refused and its URL pushed to `refused` (for the test to assert it stays empty).
 */
async function originOnlyContext(browser: Browser, origin: string, refused: string[], options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(origin)) return route.continue();
    refused.push(url);
    return route.abort();
  });
  return context;
}

/** Signs in on the sign-in page with a pasted key, keyboard only (Enter submits), and waits for the jobs page. */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.getByLabel('API key').fill(key);
  await page.getByLabel('API key').press('Enter');
  await page.getByRole('heading', { name: 'Fine-tuning jobs' }).waitFor();
}

/** What a browser suite runs against: the page may reach the gateway only. */
export interface ConsoleRig {
  browser: Browser;
  fake: FakeOpenAI;
  gw: HostedGateway;
  page: Page;
  /** Requests the page tried to send anywhere but the gateway (the console must work offline). */
  foreignRequests: string[];
  stop(): Promise<void>;
}

interface Started {
  browser?: Browser;
  fake?: FakeOpenAI;
  gw?: HostedGateway;
  data?: { remove(): Promise<void> };
}

/** Stops what was started; any of it may be missing when the start failed part way. */
async function stopAll(started: Started): Promise<void> {
  await started.browser?.close();
  await started.gw?.stop();
  await started.gw?.database.drop();
  await started.fake?.close();
  await started.data?.remove();
}

/**
 * Chromium on the built console, a hosted gateway in production mode on the embedded database with the
 * fake OpenAI (accepting `secret`, stored as the integration `@my-openai`) as its provider, and a page
 * that may reach that gateway only. `env` is given the gateway's data folder, for files it reads.
 */
export async function startConsoleRig(
  secret: string,
  env: (dataDir: string) => Record<string, string>,
  contextOptions: BrowserContextOptions = {},
): Promise<ConsoleRig> {
  ensureConsoleBuilt();
  const started: Started = {};
  try {
    const browser = (started.browser = await launchChromium());
    const fake = (started.fake = await startFakeOpenAI({ apiKey: secret }));
    const data = (started.data = await tempDir('gw-console-'));
    const database = await createTestDatabase();
    const gw = (started.gw = await startHostedGateway({ fake, database, dataDir: data.dir, key: newKey(), env: { NODE_ENV: 'production', ...env(data.dir) } }));
    await createIntegration(gw, 'my-openai', secret);
    const foreignRequests: string[] = [];
    const page = await (await originOnlyContext(browser, gw.url, foreignRequests, contextOptions)).newPage();
    return { browser, fake, gw, page, foreignRequests, stop: () => stopAll(started) };
  } catch (err) {
    await stopAll(started);
    throw err;
  }
}

/** The newest modification time of the console's sources (a branch switch or a merge changes them). */
function newestSource(dir = join(ROOT, 'console', 'src')): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((newest, entry) => {
    const path = join(dir, entry.name);
    return Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }, 0);
}

/** `npm install` builds the console; a checkout that skipped it, or whose sources changed since, gets the build here. */
export function ensureConsoleBuilt(): void {
  const index = join(CONSOLE_DIST, 'index.html');
  if (existsSync(index) && statSync(index).mtimeMs >= newestSource()) return;
  const run = spawnSync('npm', ['run', 'build:console'], { cwd: ROOT, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`npm run build:console failed:\n${run.stdout}\n${run.stderr}`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Waits until the locator's text matches (web pages update after the action that caused it). */
export async function expectText(locator: Locator, pattern: RegExp, timeout = 10_000): Promise<void> {
  const deadline = Date.now() + timeout;
  let last = '';
  for (;;) {
    last =
      (await locator
        .first()
        .textContent({ timeout })
        .catch(() => '')) ?? '';
    if (pattern.test(last.trim())) return;
    if (Date.now() > deadline) throw new Error(`expected text matching ${pattern}, last saw ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Answers the page's next dialog (a confirmation): OK or Cancel; resolves to its question. */
export function answerNextDialog(page: Page, accept: boolean): Promise<string> {
  return new Promise((resolve) => {
    page.once('dialog', (dialog) => {
      resolve(dialog.message());
      void (accept ? dialog.accept() : dialog.dismiss());
    });
  });
}

/** Waits until `read()` gives `expected` (compared as JSON). */
export async function expectEventually<T>(read: () => Promise<T>, expected: T, timeout = 10_000): Promise<void> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await read();
    if (JSON.stringify(value) === JSON.stringify(expected)) return;
    if (Date.now() > deadline) throw new Error(`expected ${JSON.stringify(expected)}, last saw ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
