// Loads a local HTML file in headless Chromium from Debian (apt-get install chromium), driven by
// playwright-core, and returns what the page did: console messages, page errors, requests that
// failed or left the file, and a full-page screenshot. There is no fallback: without Chromium the
// caller fails with the install hint (CI installs it in .ci/run).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type Page } from 'playwright-core';

export const CHROMIUM_CANDIDATES = [process.env.RC1_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(
  (p): p is string => !!p,
);

export function chromiumPath(): string {
  const found = CHROMIUM_CANDIDATES.find((p) => fs.existsSync(p));
  if (!found)
    throw new Error(
      `Chromium not found (tried ${CHROMIUM_CANDIDATES.join(', ')}): apt-get install chromium, or set RC1_CHROMIUM`,
    );
  return found;
}

export interface PageVisit {
  console: { type: string; text: string }[];
  pageErrors: string[];
  /** Requests other than the file itself (the page should make none). */
  requests: string[];
  failedRequests: string[];
  screenshot: string;
}

/** Open `file`, run `inspect` on the page, take a full-page screenshot into `shotFile`. */
export async function visitPage<T>(
  file: string,
  shotFile: string,
  inspect: (page: Page) => Promise<T>,
): Promise<PageVisit & { result: T }> {
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const visit: PageVisit = { console: [], pageErrors: [], requests: [], failedRequests: [], screenshot: shotFile };
    const url = `file://${path.resolve(file)}`;
    page.on('console', (m) => visit.console.push({ type: m.type(), text: m.text() }));
    page.on('pageerror', (e) => visit.pageErrors.push(e.message));
    page.on('request', (r) => {
      if (r.url() !== url) visit.requests.push(r.url());
    });
    page.on('requestfailed', (r) => visit.failedRequests.push(`${r.url()}: ${r.failure()?.errorText ?? '?'}`));
    await page.goto(url, { waitUntil: 'load' });
    const result = await inspect(page);
    await page.screenshot({ path: shotFile, fullPage: true });
    return { ...visit, result };
  } finally {
    await browser.close();
  }
}

/** Copy a test artefact out of the test's temp dir to a kept folder; returns where it went. */
export function keepArtefact(file: string, name: string): string {
  const dir = process.env.RC1_TEST_ARTIFACTS ?? path.join(os.tmpdir(), 'rc1-test-artifacts');
  fs.mkdirSync(dir, { recursive: true });
  const dest = path.join(dir, name);
  fs.copyFileSync(file, dest);
  return dest;
}

/** Every chart of the page: its caption, whether it holds an SVG, and how many drawn data-mark elements that SVG has. */
export async function chartsOnPage(page: Page): Promise<{ title: string; svg: boolean; marks: number }[]> {
  return page.$$eval('figure.chart', (figs) =>
    figs.map((f) => {
      const svg = f.querySelector('svg');
      const marks = svg
        ? [...svg.querySelectorAll('g.role-mark > *')].filter((el) => {
            const r = el.getBoundingClientRect();
            return r.width > 0 || r.height > 0;
          }).length
        : 0;
      return { title: f.querySelector('figcaption')?.textContent ?? '', svg: !!svg, marks };
    }),
  );
}
