import assert from 'node:assert/strict';
import { parseJsRuntimes, parseProviders, parseReport } from '../../engines/ytdlp/report';
import { warningKind, ytdlpWarnings } from '../../engines/ytdlp/warnings';
import { classify, extractorArgsFor, jsRuntimeArgs } from '../../engines/ytdlp/ytdlp.engine';
import { loadConfig } from '../../lib/config';
import { ytdlpExtractorArgsBySite } from '../../lib/source-sites';

// yt-dlp 2026.10.26's own texts (yt_dlp/extractor/youtube/_video.py, jsc/, pot/, generic.py)
const NO_RUNTIME = '[youtube] No supported JavaScript runtime could be found. Only deno is enabled by default; to use another runtime add  --js-runtimes RUNTIME[:PATH]  to your command/config. YouTube extraction without a JS runtime has been deprecated, and some formats may be missing. See  https://github.com/yt-dlp/yt-dlp/wiki/EJS  for details on installing one';
const N_FAILED = '[youtube] dQw4w9WgXcQ: n challenge solving failed: Some formats may be missing. Ensure you have a supported JavaScript runtime and challenge solver script distribution installed. Review any warnings presented before this message. For more details, refer to  https://github.com/yt-dlp/yt-dlp/wiki/EJS';
const SIG_FAILED = '[youtube] dQw4w9WgXcQ: Signature solving failed: Some formats may be missing. Ensure you have a supported JavaScript runtime and challenge solver script distribution installed.';
const EJS_SKIPPED = '[youtube] [jsc:deno] Challenge solver lib script version 0.5.0 is not supported (source: python package, variant: ScriptVariant.MINIFIED, supported version: 0.8.0)';
const SABR = '[youtube] dQw4w9WgXcQ: Some tv client https formats have been skipped as they are missing a URL. YouTube may have enabled the SABR-only streaming experiment for the current session. See  https://github.com/yt-dlp/yt-dlp/issues/12482  for more details';
const POT = '[youtube] dQw4w9WgXcQ: mweb client https formats require a GVS PO Token which was not provided. They will be skipped as they may yield HTTP Error 403. You can manually pass a GVS PO Token for this client with --extractor-args "youtube:po_token=mweb.gvs+XXX". For more information, refer to  https://github.com/yt-dlp/yt-dlp/wiki/PO-Token-Guide';
const POT_PROVIDER = "[youtube] [pot:bgutil:http] Error reaching GET http://127.0.0.1:4416/ping (caused by TransportError). Please make sure that the server is reachable at http://127.0.0.1:4416.";
const DRM = '[youtube] dQw4w9WgXcQ: Some web client https formats have been skipped as they are DRM protected. ';
const ONLY_IMAGES = '[youtube] dQw4w9WgXcQ: Only images are available for download. use --list-formats to see them';
const GENERIC = '[generic] Falling back on generic information extractor';

describe("yt-dlp's JS runtime, warnings and report", () => {
  it('maps the warnings yt-dlp prints to their kinds', () => {
    assert.equal(warningKind(NO_RUNTIME), 'no_js_runtime');
    assert.equal(warningKind(N_FAILED), 'no_js_runtime');
    assert.equal(warningKind(SIG_FAILED), 'no_js_runtime');
    assert.equal(warningKind(EJS_SKIPPED), 'no_js_runtime');
    assert.equal(warningKind(SABR), 'sabr_only');
    assert.equal(warningKind(POT), 'po_token');
    assert.equal(warningKind(POT_PROVIDER), 'po_token');
    assert.equal(warningKind(DRM), 'formats_missing');
    assert.equal(warningKind(ONLY_IMAGES), 'formats_missing');
    assert.equal(warningKind(GENERIC), 'other');
  });

  it("reads each distinct warning once, a message continued on indented lines as one, and nothing else of stderr", () => {
    const stderr = [`WARNING: ${SABR}`, '[youtube] dQw4w9WgXcQ: Downloading webpage', `WARNING: ${SABR}`, 'WARNING: [youtube] a developer option. ', '         If you experience any issues, do not report', `WARNING: ${GENERIC}`, 'ERROR: [youtube] dQw4w9WgXcQ: Video unavailable'].join('\n');
    assert.deepEqual(ytdlpWarnings(stderr), [SABR, '[youtube] a developer option. If you experience any issues, do not report', GENERIC]);
  });

  it('warnings before and after the ERROR line leave its classification as it was', () => {
    const error = 'ERROR: [youtube] x: Video unavailable. This video has been removed by the uploader';
    const alone = classify(error, 'https://www.youtube.com/watch?v=x');
    const withWarnings = classify([`WARNING: ${NO_RUNTIME}`, `WARNING: ${SABR}`, error, `WARNING: ${POT}`].join('\n'), 'https://www.youtube.com/watch?v=x');
    assert.deepEqual([withWarnings.kind, withWarnings.message], [alone.kind, alone.message]);
    // without an ERROR line the last line that is not a warning says why
    assert.match(classify(['Traceback (most recent call last):', '  File "x.py", line 1', 'OSError: [Errno 28] No space left on device', `WARNING: ${GENERIC}`].join('\n'), 'u').message, /No space left on device/);
  });

  it("every run clears yt-dlp's default runtimes and enables Deno; Node only from 22", () => {
    assert.deepEqual(jsRuntimeArgs('/venv/bin/deno', { version: '20.20.2', path: '/usr/bin/node' }), ['--no-js-runtimes', '--js-runtimes', 'deno:/venv/bin/deno']);
    assert.deepEqual(jsRuntimeArgs('/venv/bin/deno', { version: '22.1.0', path: '/opt/node22/bin/node' }), ['--no-js-runtimes', '--js-runtimes', 'deno:/venv/bin/deno', '--js-runtimes', 'node:/opt/node22/bin/node']);
  });

  it("per-site extractor arguments: YTDLP_EXTRACTOR_ARGS__<site> for that site's URLs (subdomains too) and no other", () => {
    const env = { YTDLP_EXTRACTOR_ARGS__youtube_com: 'youtube:player_client=default,mweb  youtubepot-bgutilhttp:base_url=http://127.0.0.1:4416', YTDLP_EXTRACTOR_ARGS__vimeo_com: 'vimeo:original_format_policy=never' };
    const bySite = ytdlpExtractorArgsBySite(env);
    assert.deepEqual(bySite, { youtube_com: ['youtube:player_client=default,mweb', 'youtubepot-bgutilhttp:base_url=http://127.0.0.1:4416'], vimeo_com: ['vimeo:original_format_policy=never'] });
    assert.deepEqual(extractorArgsFor('https://www.youtube.com/watch?v=x', bySite), ['--extractor-args', 'youtube:player_client=default,mweb', '--extractor-args', 'youtubepot-bgutilhttp:base_url=http://127.0.0.1:4416']);
    assert.deepEqual(extractorArgsFor('https://notyoutube.com/watch?v=x', bySite), []);
    assert.deepEqual(extractorArgsFor('https://example.com/v', bySite), []);
    assert.deepEqual(loadConfig({ ...env, DATA_DIR: '/tmp/x' }).ytdlpExtractorArgs, bySite);
    assert.throws(() => loadConfig({ YTDLP_EXTRACTOR_ARGS__youtube_com: 'player_client=mweb' }), /YTDLP_EXTRACTOR_ARGS__youtube_com: "player_client=mweb" is not KEY:ARGS/);
    assert.equal(loadConfig({ YTDLP_PATH: '/srv/venv/bin/yt-dlp' }).denoPath, '/srv/venv/bin/deno', 'Deno beside YTDLP_PATH by default');
    assert.equal(loadConfig({ DENO_PATH: '/opt/deno' }).denoPath, '/opt/deno');
  });

  it("reads yt-dlp's report: its runtimes, JS challenge and PO token providers, and the runtime in use", () => {
    assert.deepEqual(parseJsRuntimes('deno-2.9.8, node-20.20.2 (unsupported), quickjs-ng-0.10.1, bun (unknown)'), [
      { name: 'deno', version: '2.9.8', supported: true },
      { name: 'node', version: '20.20.2', supported: false },
      { name: 'quickjs-ng', version: '0.10.1', supported: true },
      { name: 'bun', version: null, supported: false },
    ]);
    assert.deepEqual(parseJsRuntimes('none'), []);
    assert.deepEqual(parseProviders('bgutil:http-2.0.2 (external), bgutil:script-deno-2.0.2 (external, unavailable), deno'), [
      { name: 'bgutil:http-2.0.2', available: true, external: true },
      { name: 'bgutil:script-deno-2.0.2', available: false, external: true },
      { name: 'deno', available: true, external: false },
    ]);
    const stderr = (runtimes: string, providers: string) =>
      [
        '[debug] yt-dlp version stable@2026.10.26 from yt-dlp/yt-dlp [c91f8de0b] (pip)',
        '[debug] Optional libraries: Cryptodome-3.24.2, certifi-2026.10.19, requests-2.34.2, sqlite3-3.40.1, urllib3-2.8.0, yt_dlp_ejs-0.8.0',
        `[debug] JS runtimes: ${runtimes}`,
        '[debug] [youtube] [pot] PO Token Providers: none',
        `[debug] [youtube] [jsc] JS Challenge Providers: ${providers}`,
        'ERROR: [youtube] mediasvc000: Unable to download API page',
      ].join('\n');
    const ok = parseReport(stderr('deno-2.9.8', 'bun (unavailable), deno, node (unavailable), quickjs (unavailable)'), ['deno']);
    assert.deepEqual([ok.runtime, ok.solves, ok.ejs, ok.error], [{ name: 'deno', version: '2.9.8', supported: true }, true, '0.8.0', undefined]);
    assert.equal(ok.lines.jsChallengeProviders, '[debug] [youtube] [jsc] JS Challenge Providers: bun (unavailable), deno, node (unavailable), quickjs (unavailable)');
    const old = parseReport(stderr('node-20.20.2 (unsupported)', 'bun (unavailable), deno (unavailable), node (unavailable), quickjs (unavailable)'), ['deno', 'node']);
    assert.deepEqual([old.runtime, old.solves], [{ name: 'node', version: '20.20.2', supported: false }, false]);
    const none = parseReport('Traceback (most recent call last):\nModuleNotFoundError: No module named yt_dlp', ['deno']);
    assert.deepEqual([none.runtime, none.solves], [null, false]);
    assert.match(none.error ?? '', /printed no JS challenge report: ModuleNotFoundError/);
  });
});
