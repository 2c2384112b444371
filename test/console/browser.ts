/**
 * Browser-test support: Debian's Chromium driven by playwright-core, the console's build, screenshots
 * to a git-ignored folder.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

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

/** `npm install` builds the console; a checkout that skipped it gets the build here. */
export function ensureConsoleBuilt(): void {
  if (existsSync(join(CONSOLE_DIST, 'index.html'))) return;
  const run = spawnSync('npm', ['run', 'build:console'], { cwd: ROOT, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`npm run build:console failed:\n${run.stdout}\n${run.stderr}`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
