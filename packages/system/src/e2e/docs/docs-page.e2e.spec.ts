import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser, TestSystem, type TestUser } from '../../testing/harness.ts';

// The interactive reference at /docs (Swagger UI, served by the gateway itself) in a real browser:
// Debian's chromium driven by playwright-core, which never downloads a browser of its own.
// `npm test` installs chromium when it can (scripts/castie.mjs, ensureChromium).
const CHROMIUM = '/usr/bin/chromium';
const missing = existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing; npm test installs Debian's chromium when run as root with apt-get`;
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];

/** Every process below `pid` (Linux /proc): the browser and its helpers, to check none outlives close(). */
function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // comm may hold spaces and parentheses: the fields after the last ')' are fixed.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (p: number) => (parents.get(p) ?? []).forEach((child) => (found.push(child), walk(child)));
  walk(pid);
  return found;
}
const alive = (pid: number) => {
  try {
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

interface Session {
  sys: TestSystem;
  base: string;
  browser: Browser;
  page: Page;
  /** Requests the page tried to send anywhere but the system (aborted). */
  elsewhere: string[];
  /** Content-Security-Policy violations and script errors the page reported. */
  problems: string[];
  /** The browser's processes (children of this test process), found once it had started. */
  processes: number[];
}

async function open(env: Record<string, string> = {}): Promise<Session> {
  const sys = await TestSystem.start({ env });
  await sys.system.gateway.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(sys.system.gateway.server.address() as { port: number }).port}`;
  const before = new Set(descendantsOf(process.pid));
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  const processes = descendantsOf(process.pid).filter((pid) => !before.has(pid));
  const context = await browser.newContext();
  const elsewhere: string[] = [];
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    if (new URL(url).origin === base) return route.continue();
    elsewhere.push(url);
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    // An API answer of 4xx is logged as an error too: that is the API speaking, not the page failing.
    if (/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) return;
    if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  return { sys, base, browser, page, elsewhere, problems, processes };
}

async function close(session: Session | undefined): Promise<void> {
  if (!session) return;
  await session.browser.close();
  await session.sys.close();
}

/** The operation's block in Swagger UI, found by method and path (not by ids the document may rename). */
const operation = (page: Page, method: string, path: string) => page.locator(`.opblock.opblock-${method}`).filter({ has: page.locator(`.opblock-summary-path[data-path="${path}"]`) });

/**
 * Opens an operation, presses "Try it out", lets `fill` set its inputs and executes it: the answer
 * as the browser received it, and once the page shows it, the status the page displays.
 */
async function tryIt(page: Page, method: string, path: string, fill: (block: ReturnType<typeof operation>) => Promise<void> = async () => {}) {
  const block = operation(page, method, path);
  if (!/\bis-open\b/.test((await block.getAttribute('class')) ?? '')) await block.locator('.opblock-summary').first().click();
  // Once pressed, the button turns into Cancel: a second call reuses the open form.
  const tryOut = block.getByRole('button', { name: 'Try it out' });
  if ((await tryOut.count()) > 0) await tryOut.click();
  await fill(block);
  const answered = page.waitForResponse((res) => new URL(res.url()).pathname === path && res.request().method() === method.toUpperCase());
  await block.locator('button.execute').click();
  const response = await answered;
  // The cell holds the code, then a note such as "Undocumented" for codes the document lacks.
  const status = block.locator('.live-responses-table .response .response-col_status').first();
  const shown = async () => (await status.innerText()).trim().split(/\s+/)[0];
  await expect.poll(shown).toBe(String(response.status()));
  return { shown: await shown(), response, request: response.request() };
}

/** Which section of the Authorize dialog: HTTP Basic (the one asking a password), or the Api-Key header, whatever the scheme is named. */
const SCHEMES = {
  basic: (page: Page) => ({ has: page.locator('input[type="password"]') }),
  apiKey: () => ({ hasText: /Name:\s*Api-Key/i }),
};

/** Fills and confirms one section of the Authorize dialog, then closes it. */
async function authorize(page: Page, scheme: keyof typeof SCHEMES, fill: (section: ReturnType<Page['locator']>) => Promise<void>) {
  await page.locator('.auth-wrapper button.authorize').click();
  const section = page.locator('.modal-ux .auth-container').filter(SCHEMES[scheme](page));
  await fill(section);
  await section.locator('button.authorize').click();
  await page.locator('.modal-ux button.btn-done').first().click();
}

describe.skipIf(missing)(`the /docs page in headless Chromium${missing ? ` (skipped: ${missing})` : ''}`, { timeout: 90_000 }, () => {
  let s: Session;
  let ada: TestUser;

  beforeAll(async () => {
    s = await open();
    ada = await s.sys.signUp();
  });
  afterAll(async () => {
    await close(s);
    // Nothing of the browser is left running once it is closed.
    expect(s.processes.length).toBeGreaterThan(0);
    expect(s.processes.filter(alive)).toEqual([]);
  });

  it('lists every operation of the OpenAPI document, with assets from the gateway only', async () => {
    const doc = (await s.sys.get('/docs/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const count = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m)).length, 0);
    const res = await s.page.goto(`${s.base}/docs`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("default-src 'self'");
    await expect.poll(() => s.page.locator('.opblock').count(), { timeout: 15_000 }).toBe(count);
    await expect(operation(s.page, 'post', '/api/signup/email/').isVisible()).resolves.toBe(true);
    await expect(operation(s.page, 'get', '/api/preferences/').isVisible()).resolves.toBe(true);
    expect(s.elsewhere).toEqual([]);
    expect(s.problems).toEqual([]);
  });

  it('"Try it out" on a public operation answers 200 (the first sign-up step)', async () => {
    const { email } = newUser('docs');
    const { shown, response } = await tryIt(s.page, 'post', '/api/signup/email/', async (block) => {
      await block.locator('.body-param-content-type select').selectOption('application/json');
      await block.locator('textarea.body-param__text').fill(JSON.stringify({ email }));
    });
    expect(response.status()).toBe(200);
    expect(shown).toBe('200');
    expect(await response.json()).toMatchObject({ status: 200 });
    expect(s.elsewhere).toEqual([]);
  });

  it('a person authorizes with HTTP Basic and reads their preferences', async () => {
    await authorize(s.page, 'basic', async (section) => {
      await section.locator('input[type="text"]').fill(ada.email);
      await section.locator('input[type="password"]').fill(ada.password);
    });
    const { shown, response, request } = await tryIt(s.page, 'get', '/api/preferences/');
    expect(await request.headerValue('authorization')).toBe(`Basic ${Buffer.from(`${ada.email}:${ada.password}`).toString('base64')}`);
    expect(response.status()).toBe(200);
    expect(shown).toBe('200');
    expect(s.elsewhere).toEqual([]);
    expect(s.problems).toEqual([]);
  });

  it('HEAD works on the page and its assets', async () => {
    for (const url of ['/docs', '/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css', '/docs/assets/castie-docs.js']) {
      const res = await fetch(`${s.base}${url}`, { method: 'HEAD' });
      expect(res.status, url).toBe(200);
      expect(await res.text(), url).toBe('');
    }
    expect((await fetch(`${s.base}/docs/assets/package.json`)).status).toBe(404);
  });
});

describe.skipIf(missing)(`the /docs page with API keys, in headless Chromium${missing ? ` (skipped: ${missing})` : ''}`, { timeout: 90_000 }, () => {
  let s: Session;
  beforeAll(async () => {
    s = await open({ API_KEYS: 'docs-test-key' });
  });
  afterAll(async () => {
    await close(s);
    expect(s.processes.filter(alive)).toEqual([]);
  });

  it('the Authorize dialog takes an Api-Key, which then goes with each request', async () => {
    await s.page.goto(`${s.base}/docs`);
    await operation(s.page, 'post', '/api/signup/email/').waitFor();
    const body = async (block: ReturnType<typeof operation>) => {
      await block.locator('.body-param-content-type select').selectOption('application/json');
      await block.locator('textarea.body-param__text').fill(JSON.stringify({ email: newUser('keyed').email }));
    };
    const refused = await tryIt(s.page, 'post', '/api/signup/email/', body);
    expect(refused.response.status()).toBeGreaterThanOrEqual(400);

    await authorize(s.page, 'apiKey', async (section) => section.locator('input').fill('docs-test-key'));
    const { shown, response, request } = await tryIt(s.page, 'post', '/api/signup/email/', body);
    expect(await request.headerValue('api-key')).toBe('docs-test-key');
    expect(response.status()).toBe(200);
    expect(shown).toBe('200');
    expect(s.elsewhere).toEqual([]);
    expect(s.problems).toEqual([]);
  });
});
