// The dashboard in a real browser (Debian chromium driven by playwright-core) against `bin/mediasvc
// serve`: sign-in, keys, jobs and their outputs, webhooks, CSRF, session expiry, account isolation.
// Every page is screenshotted at desktop and phone width into .test-tmp/screenshots/.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { AccountOwner, DashboardSession } from '../accounts/owner.entity';
import { openOrm } from '../db/orm';
import { loadConfig, projectRoot } from '../lib/config';
import { startFixturePlatform, type FixturePlatform } from './helpers/fixture-platform';
import { PT_VIDEOS, startPeerTubeFixture, type PeerTubeFixture } from './helpers/peertube-fixture';
import { startApiHarness } from './helpers/api-harness';
import { cli, freePort, waitFor } from './helpers/processes';
import { startServeStack, type ServeStack } from './helpers/serve-stack';
import { serveSpeechFiles, type SpeechFiles } from './helpers/speech-fixtures';
import { conversation } from './helpers/conversations';
import { startReceiver, type Receiver } from './helpers/webhook-receiver';

const SCREENSHOTS = path.join(projectRoot, '.test-tmp/screenshots');
const VIEWPORTS = [
  { tag: 'desktop', width: 1280, height: 800 },
  { tag: 'phone', width: 390, height: 844 },
] as const;
/** Never a browser download: the system chromium, with everything that would reach the internet switched off. */
const CHROMIUM = {
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
};
const SIGN_IN_ATTEMPTS = 4;

/** The few DOM members the in-page checks read (the project compiles without DOM types). */
interface MediaElement {
  naturalWidth: number;
  complete: boolean;
  readyState: number;
  videoWidth: number;
  decode(): Promise<void>;
}

describe('dashboard end to end: a real browser against bin/mediasvc serve', function () {
  let s: ServeStack;
  let fx: FixturePlatform;
  let pt: PeerTubeFixture;
  let speech: SpeechFiles;
  let receiver: Receiver;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  const url = (p: string) => s.base + p;
  /** A file sent to POST /v1/uploads with the stack's key; its upload_id. */
  const uploadFile = async (file: string, type: string): Promise<string> => {
    const res = await fetch(url('/v1/uploads'), { method: 'POST', headers: { authorization: `Bearer ${s.key}`, 'content-type': type, 'content-disposition': `attachment; filename="${path.basename(file)}"` }, body: fs.readFileSync(file) });
    const body = (await res.json()) as { upload_id?: string };
    assert.equal(res.status, 201, JSON.stringify(body));
    return body.upload_id!;
  };
  const asAccount = async (key: string, method: string, p: string, body?: unknown) => {
    const res = await fetch(url(p), { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as any) };
  };

  /** Screenshots the page at both widths and checks what every page must have: one h1, a main, labelled controls, images with alt text. */
  async function shoot(name: string, target: Page = page): Promise<void> {
    const problems = await target.evaluate(() => {
      const doc = (globalThis as any).document;
      const out: string[] = [];
      if (doc.querySelectorAll('h1').length !== 1) out.push('not exactly one h1');
      if (!doc.querySelector('main')) out.push('no main landmark');
      for (const el of doc.querySelectorAll('input:not([type=hidden]):not([hidden]), select, textarea')) {
        if (!el.labels?.length && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby')) out.push(`unlabelled ${el.tagName} ${el.name}`);
      }
      for (const img of doc.querySelectorAll('img')) if (!img.getAttribute('alt')) out.push(`img without alt: ${img.src}`);
      return out;
    });
    assert.deepEqual(problems, [], `${name}: ${problems.join('; ')}`);
    for (const v of VIEWPORTS) {
      await target.setViewportSize({ width: v.width, height: v.height });
      await target.screenshot({ path: path.join(SCREENSHOTS, `${name}-${v.tag}.png`), fullPage: true });
    }
    await target.setViewportSize({ width: 1280, height: 800 });
  }

  /** A new browser context signed in to `accountId` with a link from the operator CLI. */
  async function signIn(accountId: string): Promise<{ context: BrowserContext; page: Page }> {
    const link = (await cli(s.env, 'accounts', 'login-link', accountId)).pop()!;
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const p = await ctx.newPage();
    await p.goto(link);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.waitForURL(url('/dashboard'));
    return { context: ctx, page: p };
  }

  const flash = () => page.locator('.flash').textContent();
  const csrfToken = () => page.locator('input[name=_csrf]').first().inputValue();

  /** Polls the job through REST until it ends, then asserts it completed. */
  async function completed(key: string, jobId: string): Promise<any> {
    const job = await waitFor(`job ${jobId}`, async () => {
      const { body } = await asAccount(key, 'GET', `/v1/jobs/${jobId}`);
      return body.status === 'completed' || body.status === 'failed' ? body : undefined;
    }, 300_000, 300);
    assert.equal(job.status, 'completed', job.error_message ?? '');
    return job;
  }

  before(async function () {
    this.timeout(300_000);
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    fx = await startFixturePlatform();
    pt = await startPeerTubeFixture();
    speech = await serveSpeechFiles();
    receiver = await startReceiver();
    s = await startServeStack({ name: 'dashboard', plan: 'pro', env: { DASHBOARD_SIGN_IN_ATTEMPTS: String(SIGN_IN_ATTEMPTS), WHISPER_AUTO_DOWNLOAD: '', WHISPER_MODEL_DIRS: '', HF_HUB_OFFLINE: '1' } });
    browser = await chromium.launch(CHROMIUM);
  });

  after(async () => {
    await browser?.close();
    await s?.stop();
    await receiver?.close();
    await speech?.close();
    await pt?.close();
    await fx?.close();
  });

  it('signs in with a one-time link printed by the CLI: HttpOnly, SameSite=Lax session cookie; the link works once', async () => {
    const link = (await cli(s.env, 'accounts', 'login-link', s.accountId)).pop()!;
    assert.match(link, new RegExp(`^${s.base}/dashboard/login/[A-Za-z0-9_-]{43}$`));
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    const signedOut = await page.goto(url('/dashboard/keys'));
    assert.equal(signedOut!.status(), 200);
    assert.equal(new URL(page.url()).pathname, '/dashboard/sign-in');
    await shoot('sign-in');

    await page.goto(link);
    await shoot('login-link');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(url('/dashboard'));
    assert.match((await flash()) ?? '', /You are signed in/);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Overview');
    const cookie = (await context.cookies()).find((c) => c.name === 'mediasvc_session');
    assert.ok(cookie, 'session cookie');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.equal(cookie.path, '/dashboard');
    await shoot('overview');

    // keyboard: the first Tab reaches the skip link, which moves focus to the content
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent), 'Skip to content');

    const again = await browser.newContext();
    const second = await again.newPage();
    await second.goto(link);
    await second.getByRole('button', { name: 'Sign in' }).click();
    await second.getByText('This sign-in link is not valid').waitFor();
    assert.equal(new URL(second.url()).pathname, '/dashboard/login');
    await again.close();
  });

  it('creates a key shown once, which calls the REST API; deactivated it gets 403 and keeps its usage; rename, reactivate, delete after confirmation', async () => {
    await page.goto(url('/dashboard/keys'));
    await page.getByLabel('Key name').fill('browser test');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('new-key').textContent())!.trim();
    assert.match(key, /^vc_[A-Za-z0-9_-]{43}$/);
    await shoot('keys-new-key');

    assert.equal((await asAccount(key, 'GET', '/v1/account')).status, 200);
    await page.goto(url('/dashboard/keys'));
    assert.equal(await page.getByTestId('new-key').count(), 0, 'the full key is shown only once');
    const row = page.getByRole('row', { name: /browser test/ });
    assert.match((await row.textContent()) ?? '', new RegExp(`${key.slice(0, 8)}…`));
    assert.equal((await row.locator('.usage-total').textContent())?.trim(), '1', 'one request today');
    assert.match((await row.locator('svg').getAttribute('aria-label')) ?? '', /1 requests in the last 30 days/);

    await row.getByRole('button', { name: 'Deactivate browser test' }).click();
    assert.match((await flash()) ?? '', /deactivated/);
    assert.equal((await asAccount(key, 'GET', '/v1/account')).status, 403);
    const inactive = page.getByRole('row', { name: /browser test/ });
    assert.match((await inactive.textContent()) ?? '', /inactive/);
    assert.equal((await inactive.locator('.usage-total').textContent())?.trim(), '1', 'usage history survives deactivation');

    await inactive.getByRole('button', { name: 'Reactivate browser test' }).click();
    assert.equal((await asAccount(key, 'GET', '/v1/account')).status, 200);

    await page.getByRole('row', { name: /browser test/ }).getByText('Rename').click();
    await page.getByLabel('New name for browser test').fill('renamed in browser');
    await page.getByRole('row', { name: /browser test/ }).getByRole('button', { name: 'Save' }).click();
    assert.match((await flash()) ?? '', /renamed in browser/);

    await page.getByRole('link', { name: 'Delete renamed in browser' }).click();
    await shoot('key-delete-confirm');
    assert.equal((await asAccount(key, 'GET', '/v1/account')).status, 200, 'nothing is deleted before confirming');
    await page.getByRole('button', { name: 'Delete key' }).click();
    assert.match((await flash()) ?? '', /deleted/);
    assert.equal((await asAccount(key, 'GET', '/v1/account')).status, 401);
  });

  it('starts a thumbnail preview from the form generated from the registry; the page follows it live and shows the image', async function () {
    this.timeout(300_000);
    const before = await s.credits();
    await page.goto(url('/dashboard/jobs/new'));
    await shoot('new-job');
    await page.getByRole('link', { name: 'Preview' }).click();

    // a mistake first: the form comes back with the field's message, nothing is charged
    await page.getByLabel(/^URL/).fill('ftp://example.com/video.mp4');
    await page.getByRole('button', { name: /Start preview job/ }).click();
    assert.match((await page.locator('.field-invalid .error-text').first().textContent()) ?? '', /http or https/);
    await page.waitForLoadState('domcontentloaded'); // the deferred script that shows one variant's fields has run
    await shoot('new-job-form-error');

    await page.getByLabel(/^URL/).fill(fx.url('/media/v720.mp4'));
    await page.getByLabel(/^Preview type/).selectOption('thumbnail');
    assert.equal(await page.getByLabel(/^FPS/).isVisible(), false, 'only the chosen variant\'s options are shown');
    await page.getByLabel(/^Timestamp/).fill('00:01');
    // each preview type has its own width (a storyboard's is one tile's): the visible one is the chosen type's
    await page.getByLabel(/^Width/).filter({ visible: true }).fill('320');
    await shoot('new-job-preview-form');
    await page.getByRole('button', { name: /Start preview job/ }).click();
    await page.waitForURL(/\/dashboard\/jobs\/[0-9a-f-]{36}$/);
    assert.match((await flash()) ?? '', /1 credit charged/);
    const jobId = page.url().split('/').pop()!;

    // pending or processing: the page polls its JSON endpoint and reloads when the job ends
    const img = page.getByTestId('job-output-image');
    await img.waitFor({ timeout: 180_000 });
    const natural = await img.evaluate(async (el) => {
      const m = el as unknown as MediaElement;
      await m.decode();
      return m.naturalWidth;
    });
    assert.equal(natural, 320, 'the image loaded, at the width asked for');
    assert.equal(await page.getByTestId('job-status').textContent(), 'completed');
    await shoot('job-thumbnail');

    const rest = await asAccount(s.key, 'GET', `/v1/jobs/${jobId}`);
    assert.equal(rest.body.status, 'completed');
    assert.deepEqual([rest.body.parameters.preview_type, rest.body.parameters.timestamp, rest.body.parameters.width], ['thumbnail', '00:01', 320]);
    assert.equal(await s.credits(), before - 1, 'charged like REST');
    const status = await page.request.get(url(`/dashboard/jobs/${jobId}/status.json`));
    assert.deepEqual(await status.json(), { status: 'completed', progress: 100, error_message: null });

    await page.goto(url('/dashboard/jobs?status=completed&job_type=preview'));
    assert.ok((await page.content()).includes(jobId.slice(0, 8)));
    await shoot('jobs');
    await page.goto(url('/dashboard/jobs?status=failed'));
    assert.ok(!(await page.content()).includes(jobId.slice(0, 8)), 'filtered out');
    await page.goto(url('/dashboard/credits'));
    assert.ok((await page.content()).includes(jobId.slice(0, 8)), 'the charge is in the ledger');
    await shoot('credits');
  });

  it('starts a preview from a file chosen on the computer: it becomes an upload, kept when the form comes back with an error', async function () {
    this.timeout(300_000);
    const file = path.join(s.dataDir, 'from-my-laptop.mp4');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25', '-t', '3', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', file]);
    await page.goto(url('/dashboard/jobs/new/preview'));
    await page.getByLabel(/^File/).setInputFiles(file);
    await page.getByLabel(/^Preview type/).selectOption('thumbnail');
    await page.getByLabel(/^Width/).filter({ visible: true }).fill('5');
    await page.getByRole('button', { name: /Start preview job/ }).click();
    assert.match((await page.locator('.field-invalid .error-text').first().textContent()) ?? '', /at least 16/);
    const kept = await page.locator('input[type=hidden][name=upload_id]').inputValue();
    assert.match(kept, /^upl_[A-Za-z0-9]{24}$/, 'the file sent with the first try is kept');
    // the page that came back is parsed, but its deferred script, which hides the other variants' fields, may not have run yet
    await page.waitForLoadState('domcontentloaded');
    await page.getByLabel(/^Width/).filter({ visible: true }).fill('200');
    await page.getByRole('button', { name: /Start preview job/ }).click();
    await page.waitForURL(/\/dashboard\/jobs\/[0-9a-f-]{36}$/);
    const jobId = page.url().split('/').pop()!;
    const img = page.getByTestId('job-output-image');
    await img.waitFor({ timeout: 180_000 });
    assert.equal(await img.evaluate(async (el) => {
      const m = el as unknown as MediaElement;
      await m.decode();
      return m.naturalWidth;
    }), 200);
    const rest = await asAccount(s.key, 'GET', `/v1/jobs/${jobId}`);
    assert.equal(rest.body.parameters.upload_id, kept);
    assert.equal(rest.body.source_url, `upload:${kept}`);
    const upload = await asAccount(s.key, 'GET', `/v1/uploads/${kept}`);
    assert.equal(upload.body.filename, 'from-my-laptop.mp4');
    assert.equal(upload.body.size, fs.statSync(file).size);
  });

  it('renders each kind of output: GIF and mosaic images, a storyboard with its tiles\' times, a playable clip, a transcript with timestamps, a translation beside its original, the comments tree, hashes', async function () {
    this.timeout(600_000);
    const create = async (p: string, body: unknown) => {
      const res = await asAccount(s.key, 'POST', p, body);
      assert.equal(res.status, 202, JSON.stringify(res.body));
      return res.body.job_id as string;
    };
    const jobs = {
      gif: await create('/v1/preview', { url: fx.url('/watch/trailer'), preview_type: 'gif', duration: 2, width: 240 }),
      mosaic: await create('/v1/preview', { url: fx.url('/watch/trailer'), preview_type: 'mosaic', columns: 3, rows: 2 }),
      storyboard: await create('/v1/preview', { url: fx.url('/watch/trailer'), preview_type: 'storyboard', interval: 0.5, columns: 4 }),
      clip: await create('/v1/preview', { url: fx.url('/watch/trailer'), preview_type: 'clip', duration: 2 }),
      fingerprint: await create('/v1/fingerprint', { url: fx.url('/watch/trailer'), hash_size: 8 }),
      comments: await create('/v1/comments', { url: pt.url(`/w/${PT_VIDEOS.big.shortUUID}`), max_comments: 5 }),
      transcript: await create('/v1/transcribe', { url: speech.url('jfk.wav'), language: 'en', model_size: 'tiny' }),
      translation: await create('/v1/translate', { url: speech.url('jfk.wav'), source_language: 'en', target_language: 'es', model_size: 'tiny' }),
      speakers: await create('/v1/transcribe', { upload_id: await uploadFile((await conversation(2, 6, 3)).file, 'audio/wav'), language: 'en', model_size: 'tiny', diarize: true }),
    };
    for (const id of Object.values(jobs)) await completed(s.key, id);
    const open = async (name: keyof typeof jobs) => {
      await page.goto(url(`/dashboard/jobs/${jobs[name]}`));
      assert.equal(await page.getByTestId('job-status').textContent(), 'completed');
    };
    const imageWidth = () => page.getByTestId('job-output-image').evaluate(async (el) => {
      const m = el as unknown as MediaElement;
      await m.decode();
      return m.naturalWidth;
    });

    await open('gif');
    assert.equal(await imageWidth(), 240);
    await shoot('job-gif');
    await open('mosaic');
    assert.equal(await imageWidth(), 480);
    await shoot('job-mosaic');

    await open('storyboard');
    // the sprite, each tile labelled with its time, and the job's three files listed
    const board = page.getByTestId('storyboard');
    assert.equal(await board.locator('g.tile').count(), 8);
    assert.deepEqual(await board.locator('text.tile-time').allTextContents(), ['00:00.0', '00:00.5', '00:01.0', '00:01.5', '00:02.0', '00:02.5', '00:03.0', '00:03.5']);
    const sprite = await board.locator('image').getAttribute('href');
    assert.match(sprite ?? '', /\/v1\/files\/[^/]+\/storyboard\.jpg$/);
    assert.equal((await fetch(sprite!)).status, 200);
    assert.deepEqual(await page.getByTestId('job-files').locator('a').allTextContents(), ['storyboard.vtt', 'storyboard.jpg', 'storyboard.json']);
    await shoot('job-storyboard');

    await open('clip');
    const video = page.getByTestId('job-output-video');
    await page.waitForFunction((el) => (el as unknown as MediaElement).readyState >= 1, await video.elementHandle());
    assert.ok((await video.evaluate((el) => (el as unknown as MediaElement).videoWidth)) > 0, 'the clip is playable');
    await shoot('job-clip');

    await open('transcript');
    const transcript = page.getByTestId('transcript');
    assert.match((await transcript.textContent()) ?? '', /ask not what your country/i);
    assert.match((await transcript.locator('tbody tr').first().locator('td').first().textContent()) ?? '', /^\d\d:\d\d\.\d–\d\d:\d\d\.\d$/);
    await shoot('job-transcript');

    await open('speakers');
    const labelled = page.getByTestId('transcript');
    assert.equal(await labelled.locator('thead th').nth(1).textContent(), 'Speaker');
    const badges = labelled.getByTestId('speaker');
    assert.deepEqual([...new Set(await badges.allTextContents())], ['A', 'B']);
    const colours = new Set(await badges.evaluateAll((els) => els.map((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(el).backgroundColor)));
    assert.equal(colours.size, 2, `one colour per speaker: ${[...colours].join(', ')}`);
    await shoot('job-transcript-speakers');

    await open('translation');
    const table = page.getByTestId('translation');
    assert.deepEqual(await table.locator('thead th').allTextContents(), ['Time', 'Original (en)', 'Translation (es)']);
    const cells = await table.locator('tbody tr').first().locator('td').allTextContents();
    assert.ok(cells[1]!.trim() && cells[2]!.trim() && cells[1] !== cells[2], JSON.stringify(cells));
    await shoot('job-translation');

    await open('comments');
    assert.equal(await page.locator('[data-testid=comments] > li').count(), 5);
    assert.ok((await page.locator('[data-testid=comments] .replies > li').count()) > 0, 'replies nested under their comments');
    await shoot('job-comments');

    await open('fingerprint');
    assert.match((await page.locator('.hashes').textContent()) ?? '', /perceptual_hash\s*[0-9a-f]{16}/);
    await shoot('job-fingerprint');
    await page.goto(url('/dashboard/jobs'));
    for (const id of Object.values(jobs)) assert.ok((await page.content()).includes(id.slice(0, 8)));
    await shoot('jobs-all');
    await page.goto(url('/dashboard'));
    await shoot('overview-with-jobs');
    await page.goto(url('/dashboard/credits'));
    await shoot('credits-with-jobs');
  });

  it('webhooks: the new endpoint\'s secret once, a signed test delivery in the log, a failed one as an error, edit, the per-job secret revealed and rotated, delete', async () => {
    const target = receiver.url('/dashboard-hook');
    await page.goto(url('/dashboard/webhooks'));
    await page.getByLabel('URL').fill(target);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = (await page.getByTestId('new-webhook-secret').textContent())!.trim();
    assert.match(secret, /^whsec_/);
    await shoot('webhooks-new-secret');

    await page.getByRole('link', { name: `Manage ${target}` }).click();
    const id = page.url().split('/').pop()!;
    await page.getByRole('button', { name: 'Send test delivery' }).click();
    assert.match((await flash()) ?? '', /Test delivery answered 200 in \d+ ms/);
    assert.equal(await page.getByTestId('delivery-status-code').first().textContent(), '200');
    const got = receiver.received.filter((r) => r.path === '/dashboard-hook');
    assert.equal(got.length, 1);
    assert.equal(got[0]!.headers['x-service-signature'], crypto.createHmac('sha256', secret).update(got[0]!.body).digest('hex'));
    assert.equal(await page.locator('.flash').getAttribute('role'), 'status', 'a delivered test is a success notice');
    assert.equal(await page.locator('.flash-error').count(), 0);

    // a test delivery to a port nothing listens on is an error banner that says what to do, not a green notice
    const closed = `http://127.0.0.1:${await freePort()}/down`;
    await page.goto(url('/dashboard/webhooks'));
    await page.getByLabel('URL').fill(closed);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('link', { name: `Manage ${closed}` }).click();
    const downId = page.url().split('/').pop()!;
    await page.getByRole('button', { name: 'Send test delivery' }).click();
    const failed = page.locator('.flash-error');
    assert.equal(await failed.getAttribute('role'), 'alert');
    assert.match((await failed.textContent()) ?? '', /^Test delivery failed: the connection was refused: nothing accepts connections at that address and port \(ECONNREFUSED\)\. Check that the endpoint's URL is right/);
    await shoot('webhook-test-failed');
    assert.equal((await asAccount(s.key, 'DELETE', `/v1/webhooks/${downId}`)).status, 204);
    await page.goto(url(`/dashboard/webhooks/${id}`));

    await page.getByLabel('job.failed').check();
    await page.getByLabel(/^Active/).uncheck();
    await page.getByRole('button', { name: 'Save changes' }).click();
    assert.equal(await flash(), 'Endpoint saved.');
    const rest = await asAccount(s.key, 'GET', `/v1/webhooks/${id}`);
    assert.deepEqual([rest.body.events, rest.body.is_active], [['job.failed'], false]);
    await shoot('webhook-detail');

    await page.goto(url('/dashboard/webhooks'));
    await page.getByRole('button', { name: 'Reveal secret' }).click();
    const shown = (await page.getByTestId('account-webhook-secret').textContent())!.trim();
    assert.equal(shown, (await cli(s.env, 'accounts', 'webhook-secret', s.accountId)).pop());
    await page.getByRole('link', { name: 'Rotate secret' }).click();
    await shoot('webhook-secret-rotate-confirm');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = (await page.getByTestId('account-webhook-secret').textContent())!.trim();
    assert.notEqual(rotated, shown);
    assert.equal(rotated, (await cli(s.env, 'accounts', 'webhook-secret', s.accountId)).pop());

    await page.goto(url(`/dashboard/webhooks/${id}`));
    await page.getByRole('link', { name: 'Delete endpoint' }).click();
    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    assert.equal(await flash(), 'Endpoint deleted.');
    assert.equal((await asAccount(s.key, 'GET', `/v1/webhooks/${id}`)).status, 404);
  });

  it("shows a batch's progress and its items' jobs; pauses, resumes, checks and deletes a subscription", async () => {
    const urls = [fx.url('/media/v720.mp4'), fx.url('/watch/trailer')];
    const created = await asAccount(s.key, 'POST', '/v1/batches', { operation: 'waveform', source: { urls } });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const batchId = created.body.batch_id;
    await waitFor('the batch', async () => ((await asAccount(s.key, 'GET', `/v1/batches/${batchId}`)).body.status === 'completed' ? true : undefined), 300_000, 500);
    await page.goto(url('/dashboard/batches'));
    await page.getByRole('link', { name: batchId.slice(0, 8) }).click();
    assert.equal(await page.locator('progress').first().getAttribute('value'), '2');
    const jobLinks = page.locator('td[data-label="Job"] a');
    assert.equal(await jobLinks.count(), 2);
    assert.equal(await page.locator('td[data-label="Status"] .badge-completed').count(), 2);
    await shoot('batch');

    const sub = await asAccount(s.key, 'POST', '/v1/subscriptions', { url: fx.url('/missing-feed.xml'), operation: 'waveform', check_every: 3600 });
    assert.equal(sub.status, 201, JSON.stringify(sub.body));
    const subId = sub.body.subscription_id;
    const short = subId.slice(0, 8);
    await page.goto(url('/dashboard/subscriptions'));
    await page.getByRole('button', { name: `Pause subscription ${short}` }).click();
    assert.equal(await flash(), 'Subscription paused: no new jobs until it is resumed.');
    assert.equal((await asAccount(s.key, 'GET', `/v1/subscriptions/${subId}`)).body.paused, true);
    await page.getByRole('button', { name: `Resume subscription ${short}` }).click();
    assert.equal((await asAccount(s.key, 'GET', `/v1/subscriptions/${subId}`)).body.paused, false);
    await page.getByRole('button', { name: `Check subscription ${short} now` }).click();
    assert.equal(await flash(), 'Check started; new items appear as a batch.');
    // the source is a 404: the check says so on the subscription
    await waitFor('the failed check', async () => ((await asAccount(s.key, 'GET', `/v1/subscriptions/${subId}`)).body.last_error ? true : undefined), 60_000, 500);
    await page.goto(url('/dashboard/subscriptions'));
    assert.match((await page.locator('td[data-label="Last check"]').first().textContent()) ?? '', /HTTP 404/);
    await shoot('subscriptions');
    await page.getByRole('link', { name: `Delete subscription ${short}` }).click();
    await shoot('subscription-delete-confirm');
    await page.getByRole('button', { name: 'Delete subscription' }).click();
    assert.equal(await flash(), 'Subscription deleted.');
    assert.equal((await asAccount(s.key, 'GET', `/v1/subscriptions/${subId}`)).status, 404);
  });

  it('rejects a form post without the session\'s CSRF token (403) and changes nothing', async () => {
    // the keys without their last-used column, which moves with the API traffic of other tests (written in batches)
    const keys = async () => (await cli(s.env, 'keys', 'list', '--account', s.accountId)).map((l) => l.split('\t').slice(0, 5).join('\t'));
    const before = await keys();
    const missing = await page.request.post(url('/dashboard/keys'), { form: { name: 'no token' }, maxRedirects: 0 });
    assert.equal(missing.status(), 403);
    assert.match(await missing.text(), /security token is missing or wrong/);
    const wrong = await page.request.post(url('/dashboard/keys'), { form: { name: 'wrong token', _csrf: 'x'.repeat(43) }, maxRedirects: 0 });
    assert.equal(wrong.status(), 403);
    const signOut = await page.request.post(url('/dashboard/sign-out'), { form: {}, maxRedirects: 0 });
    assert.equal(signOut.status(), 403);
    assert.deepEqual(await keys(), before);
    const ok = await page.request.post(url('/dashboard/keys'), { form: { name: 'with token', _csrf: await csrfToken() }, maxRedirects: 0 });
    assert.equal(ok.status(), 200, 'the same post with the token works');
  });

  it('one account never sees another\'s data: its job, webhook and key ids are not found, lists leave them out', async () => {
    const other = (await cli(s.env, 'accounts', 'create', '--name', 'other', '--plan', 'pro')).pop()!;
    const otherKey = (await cli(s.env, 'keys', 'create', '--account', other, '--name', 'other key')).pop()!;
    const otherKeyId = (await cli(s.env, 'keys', 'list', '--account', other))[0]!.split('\t')[0]!;
    const job = await asAccount(otherKey, 'POST', '/v1/fingerprint', { url: fx.url('/media/v480.mp4') });
    assert.equal(job.status, 202);
    const hookUrl = receiver.url('/other-account');
    // job.failed only: the fingerprint job's job.completed must not reach it, so anything it receives came from here
    const hook = await asAccount(otherKey, 'POST', '/v1/webhooks', { url: hookUrl, events: ['job.failed'] });
    assert.equal(hook.status, 201);
    const jobId = job.body.job_id as string;
    await completed(otherKey, jobId);

    for (const p of [`/dashboard/jobs/${jobId}`, `/dashboard/jobs/${jobId}/status.json`, `/dashboard/webhooks/${hook.body.id}`, `/dashboard/webhooks/${hook.body.id}/delete`, `/dashboard/keys/${otherKeyId}/delete`]) {
      const res = await page.goto(url(p));
      assert.equal(res!.status(), 404, p);
    }
    await page.goto(url(`/dashboard/jobs/${jobId}`));
    await shoot('not-found');

    await page.goto(url('/dashboard/jobs'));
    assert.ok(!(await page.content()).includes(jobId.slice(0, 8)));
    await page.goto(url('/dashboard/credits'));
    assert.ok(!(await page.content()).includes(jobId.slice(0, 8)));
    await page.goto(url('/dashboard/webhooks'));
    assert.ok(!(await page.content()).includes(hookUrl));
    await page.goto(url('/dashboard/keys'));
    assert.ok(!(await page.content()).includes('other key'));

    const _csrf = await csrfToken();
    for (const p of [`/dashboard/webhooks/${hook.body.id}/delete`, `/dashboard/webhooks/${hook.body.id}/test`, `/dashboard/keys/${otherKeyId}/deactivate`, `/dashboard/keys/${otherKeyId}/delete`, `/dashboard/jobs/${jobId}/cancel`]) {
      const res = await page.request.post(url(p), { form: { _csrf }, maxRedirects: 0 });
      assert.equal(res.status(), 404, p);
    }
    assert.equal((await asAccount(otherKey, 'GET', `/v1/webhooks/${hook.body.id}`)).status, 200, 'still there');
    assert.equal((await asAccount(otherKey, 'GET', '/v1/account')).status, 200, 'the key still works');
    assert.equal(receiver.received.filter((r) => r.path === '/other-account').length, 0, 'no test delivery was sent');
  });

  it('sends an expired session back to sign-in, and back to the page after signing in again', async () => {
    const orm = await openOrm(loadConfig({ ...process.env, ...s.env }));
    try {
      const expired = await orm.em.fork().nativeUpdate(DashboardSession, { accountId: s.accountId }, { expiresAt: new Date(Date.now() - 60_000) });
      assert.ok(expired >= 1);
    } finally {
      await orm.close();
    }
    await page.goto(url('/dashboard/keys'));
    const at = new URL(page.url());
    assert.equal(at.pathname, '/dashboard/sign-in');
    assert.equal(at.searchParams.get('next'), '/dashboard/keys');
    assert.equal(at.searchParams.get('expired'), '1');
    assert.match((await page.locator('.notice').textContent()) ?? '', /Your session has expired/);
    await shoot('sign-in-expired');
    await context.close();
    ({ context, page } = await signIn(s.accountId));
  });

  it('sets a password in the dashboard (scrypt, never stored in clear), signs out, signs in with email and password; failed attempts are rate-limited', async () => {
    const email = 'owner@example.com';
    await cli(s.env, 'accounts', 'owner', s.accountId, '--email', email);
    const password = 'correct horse battery staple';
    await page.goto(url('/dashboard/account'));
    await page.getByLabel('New password', { exact: true }).fill('short');
    await page.getByLabel('New password again').fill('short');
    await page.getByRole('button', { name: 'Set password' }).click();
    assert.match((await page.locator('.error-summary').textContent()) ?? '', /at least 10 characters/);
    await page.getByLabel('New password', { exact: true }).fill(password);
    await page.getByLabel('New password again').fill(password);
    await page.getByRole('button', { name: 'Set password' }).click();
    assert.equal(await flash(), 'Password saved.');
    await shoot('account');

    const orm = await openOrm(loadConfig({ ...process.env, ...s.env }));
    try {
      const owner = await orm.em.fork().findOneOrFail(AccountOwner, { accountId: s.accountId });
      assert.match(owner.passwordHash ?? '', /^\$scrypt\$ln=17,r=8,p=1\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
      assert.ok(!owner.passwordHash!.includes(password));
    } finally {
      await orm.close();
    }

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(url('/dashboard/sign-in?signed_out=1'));
    await page.goto(url('/dashboard/keys'));
    assert.equal(new URL(page.url()).pathname, '/dashboard/sign-in', 'signed out');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    assert.match((await page.locator('.error-summary').textContent()) ?? '', /The email or password is not right/);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(url('/dashboard/keys'));

    // failed attempts count per email and per client address; past the limit even the right password waits
    const signInPage = await (await browser.newContext()).newPage();
    await signInPage.goto(url('/dashboard/sign-in'));
    const _csrf = await signInPage.locator('input[name=_csrf]').inputValue();
    const attempt = (pw: string) => signInPage.request.post(url('/dashboard/sign-in'), { form: { _csrf, email, password: pw }, maxRedirects: 0 });
    const statuses: number[] = [];
    for (let i = 0; i < SIGN_IN_ATTEMPTS + 1 && !statuses.includes(429); i++) statuses.push((await attempt(`guess ${i}`)).status());
    assert.equal(statuses[statuses.length - 1], 429, statuses.join(','));
    assert.ok(statuses.slice(0, -1).every((x) => x === 401), statuses.join(','));
    const blocked = await attempt(password);
    assert.equal(blocked.status(), 429);
    assert.ok(Number(blocked.headers()['retry-after']) > 0);
    assert.match(await blocked.text(), /Too many failed sign-in attempts/);
    await signInPage.context().close();
  });
});

describe('dashboard responses: security headers and the session cookie behind https', function () {
  it('marks the session cookie Secure when the request came over https, and sends a strict CSP on every page', async () => {
    const h = await startApiHarness('sqlite');
    try {
      const plain = await h.request('GET', '/dashboard/sign-in');
      assert.equal(plain.status, 200);
      assert.match(plain.headers.get('set-cookie') ?? '', /^mediasvc_session=[A-Za-z0-9_-]{43}; Path=\/dashboard; Expires=[^;]+; HttpOnly; SameSite=Lax$/);
      const tls = await h.request('GET', '/dashboard/sign-in', { headers: { 'x-forwarded-proto': 'https' } });
      assert.match(tls.headers.get('set-cookie') ?? '', /; HttpOnly; SameSite=Lax; Secure$/);
      const csp = plain.headers.get('content-security-policy') ?? '';
      for (const rule of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "form-action 'self'"]) assert.ok(csp.includes(rule), csp);
      assert.equal(plain.headers.get('referrer-policy'), 'no-referrer');
      assert.equal(plain.headers.get('x-frame-options'), 'DENY');
      assert.equal(plain.headers.get('cache-control'), 'no-store');
      const css = await h.request('GET', '/dashboard/assets/dashboard.css');
      assert.equal(css.status, 200);
      assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
      const again = await h.request('GET', '/dashboard/assets/dashboard.css', { headers: { 'if-none-match': css.headers.get('etag')! } });
      assert.equal(again.status, 304);
      const unknown = await h.request('GET', '/dashboard/no-such-page');
      assert.equal(unknown.status, 404);
      assert.match(unknown.headers.get('content-type') ?? '', /^text\/html/);
    } finally {
      await h.close();
    }
  });
});
