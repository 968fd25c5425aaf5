import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { type Browser, chromium, type Page } from 'playwright-core';
import type { Config } from '../../src/config/config.ts';
import type { Clock } from '../../src/time/clock.ts';
import { backends } from './backends.ts';
import { startTestServer, type TestServer } from './server.ts';

/** Debian's chromium; `.ci/run` installs it when missing. */
export const CHROMIUM = '/usr/bin/chromium';
/** Chromium's switches in every test: no sandbox (root in CI), no GPU, nothing fetched in the background. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Where the browser tests write their screenshots (README: "The dashboard"); gitignored. */
export const SCREENSHOT_DIR = join(import.meta.dirname, '..', '..', '.tmp', 'screenshots');

/**
 * Whether the browser tests run. Without Chromium they are skipped with this message outside CI; in CI
 * (`CI=true`) a missing browser is a failure, never a silent skip.
 */
export function browserSkip(): string | false {
  if (existsSync(CHROMIUM)) return false;
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing in CI: .ci/run installs it with apt`);
  return `${CHROMIUM} not found: browser tests skipped (apt-get install chromium to run them)`;
}

/** A headless Chromium with a fresh profile (Playwright gives each launch its own temporary user data dir). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
  });
}

/** Signs in through the page's own form and waits for the job monitor. */
export async function signIn(page: Page, uiUrl: string, user: string, password: string): Promise<void> {
  await page.goto(uiUrl);
  await page.fill('#user', user);
  await page.fill('#password', password);
  await page.click('#signin button[type=submit]');
  await page.locator('#who').filter({ hasText: user }).waitFor();
}

/** Saves a screenshot of the whole page as `<name>.png` in SCREENSHOT_DIR. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** Records every dialog (alert/confirm/prompt) a page opens, dismissing it; an XSS payload would open one. */
export function recordDialogs(page: Page): string[] {
  const seen: string[] = [];
  page.on('dialog', (d) => {
    seen.push(`${d.type()}: ${d.message()}`);
    void d.dismiss();
  });
  return seen;
}

/** A listening SQLite server for a browser to reach, with its origin and the dashboard's URL. */
export async function startDashboardServer(
  overrides: Partial<Config> = {},
  options: { clock?: Clock } = {},
): Promise<{ t: TestServer; origin: string; ui: string }> {
  const sqlite = backends().find((b) => b.name === 'sqlite');
  assert.ok(sqlite);
  const t = await startTestServer(sqlite, overrides, { ...options, listen: true });
  const { port } = t.server.app.server.address() as { port: number };
  const origin = `http://127.0.0.1:${port}`;
  return { t, origin, ui: `${origin}/millrace/ui` };
}
