// yt-dlp as the service runs it, with the real yt-dlp and nothing off the machine: its own verbose
// report of the JS runtime it solves YouTube's challenges with (Deno from PyPI) and of the PO token
// providers it loaded; its warnings logged and counted by kind; an update that brings the yt-dlp-ejs
// its version pins (and a self-check that refuses one that does not match); and cookies that keep
// their scope across redirects. Made-up names (www.youtube.com, public.test) are origins of the
// test's own behind a loopback proxy (helpers/names-proxy.ts), passed as the run's --proxy.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { currentYtdlpReport } from '../engines/ytdlp/report';
import { processCookieStore } from '../engines/ytdlp/site-cookies';
import { ejsStatus, selfCheck, updateYtdlp } from '../engines/ytdlp/versions';
import { createYtDlpEngine, YtDlpError } from '../engines/ytdlp/ytdlp.engine';
import { loadConfig, type Config } from '../lib/config';
import { metricsText } from '../lib/metrics';
import { startApiHarness } from './helpers/api-harness';
import { captureWarnings } from './helpers/log-capture';
import { startNamesProxy, type NamesProxy } from './helpers/names-proxy';
import { cli, waitFor } from './helpers/processes';

const execFileP = promisify(execFile);
/** An EJS-era yt-dlp other than the pinned one, pinning another yt-dlp-ejs (0.5.0; the pinned one pins 0.8.0). */
const OTHER_YTDLP = '2026.3.3';
const OTHER_EJS = '0.5.0';
/** A made-up video: the YouTube extractor runs against the test's own www.youtube.com. */
const VIDEO = 'https://www.youtube.com/watch?v=mediasvc000';

/** mediasvc_ytdlp_warnings_total{kind} in this process's registry. */
async function warningCount(kind: string): Promise<number> {
  const m = new RegExp(`^mediasvc_ytdlp_warnings_total\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(await metricsText());
  return m ? Number(m[1]) : NaN;
}

describe("yt-dlp's JS runtime, warnings, EJS updates and cookie scope (real yt-dlp, loopback only)", function () {
  this.timeout(10 * 60_000);
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let config: Config;
  let clip: string;
  let names: NamesProxy;

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-ytdlp-runtime-'));
    env = { DATA_DIR: dataDir, DATABASE_URL: '', TEMPORAL_ADDRESS: '' };
    config = loadConfig({ ...process.env, ...env });
    clip = path.join(dataDir, 'clip.mp4');
    await execFileP(config.ffmpegPath, ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10:duration=1', '-f', 'lavfi', '-i', 'sine=duration=1', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', clip]);
    const media = (res: import('node:http').ServerResponse) => res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': fs.statSync(clip).size }).end(fs.readFileSync(clip));
    names = await startNamesProxy((host, p, _req, res) => {
      // just enough of a watch page for the YouTube extractor to reach its choice of clients, where it checks its JS runtime
      if (host === 'www.youtube.com' && p.startsWith('/watch?v=mediasvc000')) res.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>made up</title></head><body><script>var ytInitialData = {"contents": {"twoColumnWatchNextResults": {}}};</script></body></html>');
      else if (host === 'media.test' && p === '/page') res.writeHead(200, { 'content-type': 'text/html' }).end('<!DOCTYPE html><html><head><title>A page</title><meta property="og:video" content="http://media.test/clip.mp4"><meta property="og:video:type" content="video/mp4"></head><body></body></html>');
      else if (host === 'public.test' && p === '/to-subdomain') res.writeHead(302, { location: 'http://pt.public.test/clip.mp4' }).end();
      else if (host === 'public.test' && p === '/to-other-site') res.writeHead(302, { location: 'http://other.test/clip.mp4' }).end();
      else if (p === '/clip.mp4' && ['media.test', 'pt.public.test', 'other.test'].includes(host)) media(res);
      else return false;
      return true;
    });
  });
  after(async () => {
    await names?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("yt-dlp's own verbose report for the service's command line: Deno is an available JS challenge provider, and tools yt-dlp status prints yt-dlp's lines", async () => {
    const report = await currentYtdlpReport(config);
    console.log(`      yt-dlp says: ${report.lines.jsChallengeProviders}`);
    assert.equal(report.error, undefined);
    assert.ok(report.challengeProviders.some((p) => p.available), `no JS challenge provider is available: ${report.lines.jsChallengeProviders}`);
    assert.deepEqual(report.challengeProviders.find((p) => p.name === 'deno'), { name: 'deno', available: true, external: false });
    // Deno 2.9.8 from PyPI (requirements-deno.txt); Node 20, which yt-dlp counts as unsupported, is not enabled
    assert.deepEqual(report.runtime, { name: 'deno', version: '2.9.8', supported: true });
    assert.equal(report.lines.jsRuntimes, '[debug] JS runtimes: deno-2.9.8');
    assert.equal(report.ejs, '0.8.0');

    const status = await cli(env, 'tools', 'yt-dlp', 'status');
    for (const line of [report.lines.jsRuntimes, report.lines.jsChallengeProviders, report.lines.poTokenProviders]) assert.ok(status.includes(line!), `status prints ${line}:\n${status.join('\n')}`);
    assert.ok(status.includes('JS runtime in use: deno 2.9.8'), status.join('\n'));
    assert.ok(status.includes('yt-dlp-ejs: 0.8.0 (yt-dlp expects 0.8.0)'), status.join('\n'));

    // without Deno, yt-dlp's report says no provider is available
    const none = await currentYtdlpReport({ ...config, denoPath: path.join(dataDir, 'no-deno') });
    assert.equal(none.solves, false);
    assert.ok(none.challengeProviders.length > 0 && none.challengeProviders.every((p) => !p.available), none.lines.jsChallengeProviders ?? '');
    assert.match((await cli({ ...env, DENO_PATH: path.join(dataDir, 'no-deno') }, 'tools', 'yt-dlp', 'status')).join('\n'), /^JS runtime in use: none/m);
  });

  it('/readyz: yt-dlp with no working JS runtime makes the service degraded (still 200), from its own report', async () => {
    const h = await startApiHarness('sqlite');
    try {
      h.config.denoPath = path.join(dataDir, 'no-deno');
      type Ready = { status: string; js_runtime: { runtime: string | null; solves: boolean; runtimes: string | null; challenge_providers: string | null } | null };
      const ready = await waitFor('/readyz with yt-dlp\'s report', async () => {
        const res = await h.request('GET', '/readyz');
        return (res.body as Ready).js_runtime ? res : undefined;
      }, 60_000, 250);
      assert.equal(ready.status, 200);
      const body = ready.body as Ready;
      assert.equal(body.status, 'degraded');
      assert.deepEqual([body.js_runtime!.runtime, body.js_runtime!.solves, body.js_runtime!.runtimes], [null, false, 'none']);
      assert.match(body.js_runtime!.challenge_providers ?? '', /^bun \(unavailable\), deno \(unavailable\)/);
    } finally {
      await h.close();
    }
  });

  it("tools yt-dlp status lists the PO token providers yt-dlp loaded: bgutil-ytdlp-pot-provider 2.0.2 (PyPI) in a plugin folder, its token server given by youtube.com's extractor arguments", async () => {
    const plugins = path.join(dataDir, 'plugins');
    await execFileP(path.join(path.dirname(config.ytdlpPath), 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', '--target', path.join(plugins, 'bgutil'), 'bgutil-ytdlp-pot-provider==2.0.2'], { timeout: 300_000 });
    const status = await cli({ ...env, YTDLP_PLUGIN_DIRS: plugins, YTDLP_EXTRACTOR_ARGS__youtube_com: 'youtubepot-bgutilhttp:base_url=http://127.0.0.1:4416' }, 'tools', 'yt-dlp', 'status');
    const pot = status.find((l) => l.includes('PO Token Providers:'));
    assert.match(pot ?? '', /^\[debug\] \[youtube\] \[pot\] PO Token Providers: .*\bbgutil:http-2\.0\.2 \(external\)/, status.join('\n'));
    // without the plugin folder: none
    assert.ok((await cli(env, 'tools', 'yt-dlp', 'status')).includes('[debug] [youtube] [pot] PO Token Providers: none'));
  });

  it("a YouTube read with no JS runtime: yt-dlp's warning is logged once with the job and the site, counted as no_js_runtime in /metrics, the ERROR line still classifies the failure; with Deno there is no such warning", async () => {
    const engine = (denoPath?: string) => createYtDlpEngine({ binary: config.ytdlpPath, ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath, denoPath, extraArgs: ['--prefer-insecure'] });
    const before = { noJs: await warningCount('no_js_runtime'), other: await warningCount('other') };
    const without = await captureWarnings(() => engine(path.join(dataDir, 'no-deno')).probe(VIDEO, { proxyUrl: names.url, context: { jobId: 'job-under-test' } }));
    assert.ok(without.error instanceof YtDlpError, String(without.error));
    assert.equal(without.error.kind, 'failed');
    assert.match(without.error.message, /^Reading the source failed: .*Failed to extract any player response$/, 'the ERROR line, not a warning, says why');
    const warned = without.lines.filter((l) => l.msg.startsWith('yt-dlp warned'));
    const noJs = warned.filter((l) => l.fields.kind === 'no_js_runtime');
    assert.equal(noJs.length, 1, JSON.stringify(warned));
    assert.deepEqual({ job_id: noJs[0]!.fields.job_id, site: noJs[0]!.fields.site }, { job_id: 'job-under-test', site: 'youtube.com' });
    assert.match(String(noJs[0]!.fields.warning), /^\[youtube\] No supported JavaScript runtime could be found/);
    const texts = warned.map((l) => l.fields.warning);
    assert.equal(new Set(texts).size, texts.length, `each distinct warning once: ${JSON.stringify(texts)}`);
    assert.ok(warned.every((l) => l.fields.job_id === 'job-under-test' && l.fields.site === 'youtube.com'));
    assert.equal(await warningCount('no_js_runtime'), before.noJs + 1);
    assert.equal(await warningCount('other'), before.other + warned.filter((l) => l.fields.kind === 'other').length);

    const withDeno = await captureWarnings(() => engine().probe(VIDEO, { proxyUrl: names.url }));
    assert.ok(withDeno.error instanceof YtDlpError);
    assert.deepEqual(withDeno.lines.filter((l) => l.fields.kind === 'no_js_runtime'), [], 'with Deno, yt-dlp finds its JS runtime');
    assert.equal(await warningCount('no_js_runtime'), before.noJs + 1);
  });

  it('a download that warns still returns the file yt-dlp printed (--print after_move:filepath), and its warning is logged and counted', async () => {
    const engine = createYtDlpEngine({ binary: config.ytdlpPath, ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath });
    const before = await warningCount('other');
    const outDir = path.join(dataDir, 'download');
    const run = await captureWarnings(() => engine.download({ url: 'http://media.test/page', proxyUrl: names.url, outDir, format: 'b', context: { jobId: 'job-download' } }));
    assert.equal(run.error, undefined, String(run.error));
    assert.equal(run.result, path.join(outDir, 'source.mp4'));
    assert.equal(fs.statSync(run.result!).size, fs.statSync(clip).size);
    const warned = run.lines.filter((l) => l.msg.startsWith('yt-dlp warned'));
    assert.deepEqual(warned.map((l) => [l.fields.kind, l.fields.job_id, l.fields.site, l.fields.warning]), [['other', 'job-download', 'media.test', '[generic] Falling back on generic information extractor']]);
    assert.equal(await warningCount('other'), before + 1);
  });

  it(`tools yt-dlp update --version ${OTHER_YTDLP} installs the yt-dlp-ejs that version pins (${OTHER_EJS}) into its folder; a version that would ignore its EJS fails the self-check`, async function () {
    const tools = { ...config, ytdlpToolsDir: path.join(dataDir, 'tools') };
    const lines: string[] = [];
    const out = await updateYtdlp(tools, OTHER_YTDLP, (l) => lines.push(l));
    assert.equal(out.rolledBack, undefined, JSON.stringify(out));
    const installed = out.to;
    assert.equal(installed, '2026.03.03');
    assert.ok(lines.includes(`installing yt-dlp-ejs ${OTHER_EJS} (the version yt-dlp ${installed} pins) from PyPI`), lines.join('\n'));
    const lib = path.join(tools.ytdlpToolsDir, installed, 'lib');
    assert.ok(fs.existsSync(path.join(lib, `yt_dlp_ejs-${OTHER_EJS}.dist-info`)), fs.readdirSync(lib).join(', '));
    const wrapper = path.join(tools.ytdlpToolsDir, installed, 'yt-dlp');
    assert.deepEqual(await ejsStatus(tools, wrapper), { expects: OTHER_EJS, has: OTHER_EJS, usable: true });
    // yt-dlp's own report, for the version now in use, names the EJS it loaded
    const report = await currentYtdlpReport(tools);
    assert.equal(report.ejs, OTHER_EJS, report.lines.optionalLibraries ?? '');
    assert.ok(report.challengeProviders.some((p) => p.name === 'deno' && p.available));

    // the same version with only the virtualenv's yt-dlp-ejs (0.8.0): yt-dlp would ignore it
    for (const name of fs.readdirSync(lib).filter((n) => n.startsWith('yt_dlp_ejs'))) fs.rmSync(path.join(lib, name), { recursive: true });
    assert.deepEqual(await ejsStatus(tools, wrapper), { expects: OTHER_EJS, has: '0.8.0', usable: false });
    await assert.rejects(selfCheck(tools, wrapper), /the self-check failed on its challenge solver: yt-dlp expects yt-dlp-ejs 0\.5\.0 and would ignore the 0\.8\.0 it has/);
    // the pinned yt-dlp with the virtualenv's own passes
    await selfCheck(tools, config.ytdlpPath);
  });

  it('cookies keep their scope across redirects: a host-only cookie reaches its host alone, a domain cookie its domain and subdomains, neither another site', async () => {
    const file = path.join(dataDir, 'cookies.txt');
    const expiry = Math.floor(Date.now() / 1000) + 86_400;
    const line = (...f: (string | number)[]) => f.join('\t');
    fs.writeFileSync(file, ['# Netscape HTTP Cookie File',
      line('public.test', 'FALSE', '/', 'FALSE', expiry, 'hostonly', 'h1'),
      // an exporter's leading dot with the subdomain flag FALSE: host-only all the same (the flag decides)
      line('.public.test', 'FALSE', '/', 'FALSE', expiry, 'dotted', 'd1'),
      line('.public.test', 'TRUE', '/', 'FALSE', expiry, 'domain', 'x1'),
      ''].join('\n'));
    assert.match((await cli(env, 'cookies', 'set', '--site', 'public.test', file)).join('\n'), /stored 3 cookies for public\.test/);
    const engine = createYtDlpEngine({ binary: config.ytdlpPath, ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath, cookies: processCookieStore(config) });
    for (const source of ['http://public.test/to-subdomain', 'http://public.test/to-other-site']) {
      const outDir = path.join(dataDir, `cookies-${path.basename(source)}`);
      const file = await engine.download({ url: source, proxyUrl: names.url, outDir, format: 'b' });
      assert.ok(fs.statSync(file).size > 0);
    }
    const cookiesAt = (host: string) => names.seen.filter((r) => r.host === host).map((r) => (r.cookie ?? '').split(/;\s*/).filter(Boolean).map((c) => c.split('=')[0]).sort().join(','));
    const at = { origin: cookiesAt('public.test'), subdomain: cookiesAt('pt.public.test'), other: cookiesAt('other.test') };
    assert.ok(at.origin.length >= 2 && at.subdomain.length >= 1 && at.other.length >= 1, `each host was asked: ${JSON.stringify(at)}`);
    assert.deepEqual([...new Set(at.origin)], ['domain,dotted,hostonly'], 'the origin gets all three');
    assert.deepEqual([...new Set(at.subdomain)], ['domain'], 'the subdomain gets the domain cookie alone');
    assert.deepEqual([...new Set(at.other)], [''], 'another site gets none');
    const counted = { origin: at.origin.filter(Boolean).length, subdomain: at.subdomain.filter(Boolean).length, other: at.other.filter(Boolean).length };
    console.log(`      requests with a Cookie header: public.test ${counted.origin}/${at.origin.length}, pt.public.test ${counted.subdomain}/${at.subdomain.length}, other.test ${counted.other}/${at.other.length}`);
  });
});
