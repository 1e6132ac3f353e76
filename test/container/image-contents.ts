// Lists an image's files and reads every byte of them for what must never be published: the build's
// CA bundle (a network's own certificates, given to the build as a secret), keys, credentials, and
// the tools only the tests need.
import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { CONTAINERS_CONF, podman } from './podman';

const execFileP = promisify(execFile);

/** The certificates of a PEM bundle, each as its base64 body. */
function pemCertificates(text: string): string[] {
  return [...text.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)].map((m) => m[1]!.replace(/\s+/g, ''));
}

/** Every certificate in the .crt files under `dir`. */
function debianCertificates(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.crt')).flatMap((f) => pemCertificates(fs.readFileSync(path.join(dir, f), 'utf8')));
}

/** Paths that only a build, a developer's machine or the tests leave behind. */
const FORBIDDEN_PATHS: [RegExp, string][] = [
  [/^run\/secrets\/./, 'a build secret'],
  [/(^|\/)secrets\.key$/, "the service's key for stored secrets"],
  [/(^|\/)\.npmrc$|(^|\/)\.pypirc$|(^|\/)pip\.conf$/, "a package manager's credentials file"],
  [/(^|\/)id_(rsa|ed25519|ecdsa)$/, 'an SSH key'],
  [/^root\/\.(npm|cache)\//, 'a build cache'],
  [/^usr\/lib\/jvm\/|(^|\/)temporal-test-server[^/]*\.jar$/, 'Java or the time-skipping test server'],
  [/^usr\/(lib|bin)\/chromium/, 'Chromium'],
  [/\/site-packages\/moto\//, 'moto'],
  [/^app\/dist\/test\//, 'the compiled tests'],
  [/^app\/(test|\.test-tmp|\.git)\//, 'the repository itself'],
  [/^data\/./, 'data in the volume'],
];

/**
 * What in `image` should not be there: one line per finding, empty when it is clean. The markers
 * searched for are the CA certificates of this machine's bundle that Debian's ca-certificates
 * package does not ship: those a build would only get from the secret.
 */
export async function imageFindings(image: string, work: string): Promise<string[]> {
  const findings: string[] = [];
  const hostBundle = fs.readFileSync(process.env.BUILD_CA_FILE ?? '/etc/ssl/certs/ca-certificates.crt', 'utf8');
  // Debian's own certificates are those its ca-certificates package ships on this machine; the rest were added here
  const stock = new Set(debianCertificates('/usr/share/ca-certificates'));
  const extra = pemCertificates(hostBundle).filter((c) => !stock.has(c));
  // a certificate's PEM lines and its DER bytes: either form in any file is a finding
  const markers = extra.flatMap((b64) => [Buffer.from(b64.slice(64, 128)), Buffer.from(b64, 'base64').subarray(40, 104)]);

  const ctr = await podman('create', image);
  const tar = path.join(work, 'image.tar');
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn('podman', ['export', '-o', tar, ctr], { env: { ...process.env, CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? CONTAINERS_CONF }, stdio: 'ignore' });
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`podman export exited ${code}`))));
    });
  } finally {
    await podman('rm', ctr);
  }
  try {
    const { stdout } = await execFileP('tar', ['-tf', tar], { maxBuffer: 512 * 1024 * 1024 });
    for (const entry of stdout.split('\n')) {
      const p = entry.replace(/^\.?\//, '');
      for (const [re, what] of FORBIDDEN_PATHS) if (re.test(p)) findings.push(`${what}: /${p}`);
    }
    // every byte of the image, with an overlap so that a marker across two reads is found
    const longest = Math.max(...markers.map((m) => m.length));
    let carry = Buffer.alloc(0);
    let offset = 0;
    for await (const chunk of fs.createReadStream(tar, { highWaterMark: 8 * 1024 * 1024 }) as AsyncIterable<Buffer>) {
      const buf = Buffer.concat([carry, chunk]);
      for (const [i, m] of markers.entries()) {
        const at = buf.indexOf(m);
        if (at >= 0) findings.push(`CA certificate ${Math.floor(i / 2) + 1} of this machine's ${extra.length} beyond Debian's (as ${i % 2 ? 'DER' : 'PEM'}) at byte ${offset - carry.length + at} of the exported image`);
      }
      carry = buf.subarray(Math.max(0, buf.length - longest));
      offset += chunk.length;
    }
    if (extra.length === 0) console.log("      (this machine has no CA certificate beyond Debian's: only the paths were checked)");
    else console.log(`      looked for ${extra.length} CA certificate(s) added on this machine beyond Debian's, in ${Math.round(offset / 1e6)} MB: ${findings.length ? 'found' : 'none'}`);
    console.log(`      image files: ${stdout.split('\n').length}; sha256 of the listing ${crypto.createHash('sha256').update(stdout).digest('hex').slice(0, 12)}`);
  } finally {
    fs.rmSync(tar, { force: true });
  }
  return [...new Set(findings)];
}
