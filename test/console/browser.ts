/**
 * Browser-test support: Debian's Chromium driven by playwright-core, the console's build, screenshots
 * to a git-ignored folder.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';

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
