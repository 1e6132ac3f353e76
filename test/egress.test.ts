import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ATTACKS, FEED_ITEMS, JOB_KINDS, PEERTUBE_CHANNEL, LITERALS, type Created, type JobKind, type LabReport } from './helpers/egress-lab';

const execFileP = promisify(execFile);
const REFUSAL = /^The source tried to reach a private or reserved address \((127\.0\.0\.1|::1|169\.254\.169\.254)\), which is not allowed$/;
const KINDS = Object.keys(JOB_KINDS) as JobKind[];

/** A failed job: one charge, one refund, and an error_message a person can read. */
function assertFailedAndRefunded(c: Created | undefined, what: string): void {
  assert.ok(c, `${what}: no observation`);
  assert.equal(c.status, 202, `${what}: ${c.detail ?? ''}`);
  assert.equal(c.finalStatus, 'failed', `${what}: ${c.finalStatus} ${JSON.stringify(c.resultData)}`);
  assert.equal(c.charges, 1, `${what}: charged once`);
  assert.equal(c.refunds, 1, `${what}: refunded once`);
  assert.ok(c.errorMessage && !/0x[0-9a-f]{6,}|caused by|Traceback|<\w+Error/.test(c.errorMessage), `${what}: a sentence, not tool internals: ${c.errorMessage}`);
}

describe('egress safety: attacks from a "public" origin inside a private network namespace (real serve, ALLOW_PRIVATE_NETWORK unset)', function () {
  this.timeout(25 * 60_000);
  let r: LabReport;

  before(async function () {
    assert.equal(process.getuid?.(), 0, 'the egress lab makes its own network and mount namespace (unshare --net --mount), which needs root');
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-egress-')), 'report.json');
    const lab = path.join(__dirname, 'helpers', 'egress-lab.js');
    try {
      await execFileP('unshare', ['--net', '--mount', '--fork', process.execPath, '--enable-source-maps', lab, out], { maxBuffer: 64 * 1024 * 1024, timeout: 24 * 60_000 });
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`the egress lab failed: ${e.message}\n${(e.stderr ?? '').slice(-4000)}`);
    }
    r = JSON.parse(fs.readFileSync(out, 'utf8')) as LabReport;
    fs.rmSync(path.dirname(out), { recursive: true, force: true });
  });

  it('no request reaches any canary: 127.0.0.1, ::1 or 169.254.169.254', () => {
    assert.deepEqual(r.canaryHits, []);
  });

  for (const name of Object.keys(ATTACKS)) {
    const local = name.startsWith('local file');
    it(`${name}: every kind of job fails with one refund${local ? ', and nothing local is read' : ', naming the refused address'}`, () => {
      const seen = r.attacks[name]!;
      for (const kind of KINDS) {
        const c = seen[kind];
        assertFailedAndRefunded(c, `${name} / ${kind}`);
        // comments never need the media, so page attacks may fail earlier, as "not supported"
        if (!local && !(kind === 'comments' && !/redirect|rebinding|JSON-LD/.test(name))) assert.match(c!.errorMessage!, REFUSAL, `${name} / ${kind}`);
      }
      const info = seen.info!;
      if (/redirect|rebinding/.test(name)) {
        assert.equal(info.status, 422, `${name} / info`);
        assert.match(info.detail!, REFUSAL);
      } else {
        // the page or playlist itself is public: its metadata may be read; the private part is never fetched.
        // A "media file" that is a text list of local paths is no media at all: 404, like any unsupported URL.
        const allowed = local ? [200, 404, 422] : [200, 422];
        assert.ok(allowed.includes(info.status), `${name} / info: ${info.status} ${info.detail ?? ''}`);
      }
    });
  }

  it('DNS rebinding was exercised: the name answered public first, then 127.0.0.1, and the second answer was refused', () => {
    const rebinding = r.dns.filter((d) => d.name.startsWith('rebind2-'));
    const names = new Set(rebinding.map((d) => d.name));
    assert.ok(names.size >= KINDS.length + 1, 'one name per job and the info read');
    for (const n of names) {
      const answers = rebinding.filter((d) => d.name === n).map((d) => d.answer);
      assert.deepEqual(answers.slice(0, 2), ['11.22.33.44', '11.22.33.44'], n);
      assert.ok(answers.includes('127.0.0.1'), `${n} was asked again after the checks: ${answers.join(', ')}`);
    }
  });

  it('a private address written directly, in every spelling, is a 422 for every job kind, info, a job webhook_url and a webhook endpoint', () => {
    for (const [name, url] of Object.entries(LITERALS)) {
      const l = r.literals[name]!;
      for (const kind of KINDS) {
        assert.equal(l.jobs[kind]!.status, 422, `${name} / ${kind}: ${url}`);
        assert.match(l.jobs[kind]!.detail!, /private or reserved address|user name or password|backslash/, `${name} / ${kind}`);
        assert.equal(l.jobs[kind]!.charges ?? 0, 0, 'nothing charged');
      }
      assert.equal(l.info.status, 422, `${name} / info`);
      assert.equal(l.webhookUrl.status, 422, `${name} / webhook_url`);
      assert.match(l.webhookUrl.detail!, /^webhook_url/, `${name} / webhook_url names the field`);
      // a webhook endpoint's hostname is checked when it is called (its DNS may change); literals at once
      if (name === 'a name that resolves to 127.0.0.1') assert.equal(l.endpoint.status, 201);
      else assert.equal(l.endpoint.status, 422, `${name} / endpoint: ${l.endpoint.detail ?? ''}`);
    }
  });

  it('webhook targets that redirect to or resolve to a private address: every attempt fails, none reaches a canary', () => {
    const w = r.webhooks;
    assert.deepEqual([w.redirectEndpoint.status, w.redirectEndpoint.error], [302, 'the endpoint answered HTTP 302']);
    assert.equal(w.privateNameEndpoint.created, 201);
    assert.equal(w.privateNameEndpoint.status, null);
    assert.match(w.privateNameEndpoint.error!, /canary\.test resolves to 127\.0\.0\.1, a private or reserved address, which is not allowed/);
    for (const [what, d] of [['per-job 302', w.perJobRedirect], ['per-job rebinding', w.perJobRebind]] as const) {
      assert.equal(d.job.finalStatus, 'completed', what);
      assert.equal(d.deliveries.length, 4, `${what}: the contract's four attempts`);
      assert.ok(d.deliveries.every((x) => x.status === 'failed'), what);
    }
    assert.ok(w.perJobRedirect.deliveries.every((x) => x.status_code === 302));
    assert.ok(w.perJobRebind.deliveries.every((x) => /resolves to 127\.0\.0\.1, a private or reserved address/.test(x.error ?? '')));
    // an endpoint whose name resolves to a canary received every job's events: all refused
    assert.ok(w.catchAllEndpointDeliveries.attempts > 100, String(w.catchAllEndpointDeliveries.attempts));
    assert.equal(w.catchAllEndpointDeliveries.succeeded, 0);
    assert.deepEqual([...new Set(r.publicHooks)], ['/hook-redirect'], 'the public target answered, its redirect was not followed');
  });

  it('legitimate jobs from the public origin complete, through the same checked path, with the right output', () => {
    for (const kind of KINDS) {
      const c = r.legit[kind]!;
      assert.equal(c.finalStatus, 'completed', `${kind}: ${c.errorMessage ?? ''}`);
      assert.equal(c.refunds, 0, kind);
    }
    assert.equal(r.legit.info!.status, 200);
    const stream = (k: 'download' | 'clip' | 'gif') => (r.legit[k]!.probe!.streams as { codec_type: string; codec_name: string; height: number }[]).find((s) => s.codec_type === 'video')!;
    assert.deepEqual([stream('download').codec_name, stream('download').height], ['h264', 480]);
    assert.deepEqual([stream('clip').codec_name, stream('clip').height], ['h264', 90]);
    assert.equal(stream('gif').codec_name, 'gif');
    assert.match(String(r.legit.transcribe!.resultData!.text), /ask not what your country can do for you/i);
    assert.match(String(r.legit.translate!.resultData!.translated_text), /país/);
    assert.equal(r.legit.comments!.resultData!.top_level_count, 5);
    assert.match(String(r.legit.fingerprint!.resultData!.perceptual_hash), /^[0-9a-f]{16}$/);
  });

  it('a feed listing private addresses: each such item is skipped or fails refused, without a request; the public item completes; a feed that redirects to 127.0.0.1 fails', () => {
    const items = new Map(r.batches.feedItems.map((i) => [i.title, i]));
    assert.equal(r.batches.feedStatus, 'completed');
    assert.deepEqual([...items.keys()].sort(), Object.keys(FEED_ITEMS).sort());
    for (const name of Object.keys(FEED_ITEMS)) {
      const item = items.get(name)!;
      if (name === 'public') {
        assert.equal(item.status, 'completed', JSON.stringify(item));
        continue;
      }
      assert.ok(['skipped', 'failed'].includes(item.status), `${name}: ${JSON.stringify(item)}`);
      assert.match(item.reason ?? '', /not allowed|private|refused|loopback|link-local|reserved/i, `${name}: ${item.reason}`);
    }
    // a literal private address is refused before anything is charged; no item's request reached a canary (above)
    for (const name of ['literal 127.0.0.1', 'literal [::1]', 'metadata address']) assert.equal(items.get(name)!.status, 'skipped', name);
    assert.equal(r.batches.redirectFeed.status, 'failed');
    assert.match(r.batches.redirectFeed.error ?? '', /not allowed/);
  });

  it("a PeerTube channel expands through yt-dlp's flat listing of its REST API: one item per video, no video page fetched", () => {
    const ch = r.batches.peertubeChannel;
    assert.equal(ch.status, 'completed', JSON.stringify(ch));
    assert.deepEqual(ch.items.map((i) => i.url), PEERTUBE_CHANNEL.videos.map((v) => `https://${PEERTUBE_CHANNEL.host}/w/${v}`));
    assert.deepEqual(ch.items.map((i) => i.title), ['Channel video 1', 'Channel video 2', 'Channel video 3']);
  });

  it('no output file holds the contents of /etc/passwd', () => {
    assert.deepEqual(r.filesWithPasswd, []);
  });

  it('the ledger is exact: each job charged once, each failed one refunded once, the balance what the completed jobs cost', () => {
    assert.equal(r.ledger.balance, r.ledger.expected);
  });
});
