import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Account } from '../accounts/entity';
import { rotateWebhookSecret } from '../accounts/repository';
import { resealStoredSecrets } from '../db/sealed-secrets';
import { serverSecret } from '../db/secrets.repository';
import { WebhookEndpoint } from '../webhooks/entity';
import { loadSecretBox, newSecretKeyText, parseSecretKey, readKeyFile, SecretBox, SecretKeyError, type SecretsSettings } from '../lib/secret-box';
import { startApiHarness, type ApiHarness } from './helpers/api-harness';
import { cli } from './helpers/processes';
import { startReceiver, type Receiver } from './helpers/webhook-receiver';

const run = promisify(execFile);

/** What an attacker with a copy of the database file reads. */
async function sqliteDump(file: string): Promise<string> {
  const { stdout } = await run('sqlite3', [file, '.dump'], { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

describe('secrets at rest: webhook secrets and the download-link key are sealed with AES-256-GCM', function () {
  describe('the sealing box', () => {
    const k1 = parseSecretKey(newSecretKeyText(), 'k1');
    const k2 = parseSecretKey(crypto.randomBytes(32).toString('hex'), 'k2');

    it('opens what it sealed, names the key, and seals the same secret the same way under one key', () => {
      const box = new SecretBox(k1);
      const sealed = box.seal('whsec_abc', 'accounts.webhook_secret');
      assert.match(sealed, new RegExp(`^enc:v1:${k1.id}:[A-Za-z0-9_-]+$`));
      assert.doesNotMatch(sealed, /whsec_abc/);
      assert.equal(box.open(sealed, 'accounts.webhook_secret'), 'whsec_abc');
      assert.equal(box.seal('whsec_abc', 'accounts.webhook_secret'), sealed, 'an unchanged column stays unchanged');
      assert.notEqual(box.seal('whsec_abd', 'accounts.webhook_secret').slice(-40), sealed.slice(-40));
      assert.equal(box.open('whsec_plain', 'accounts.webhook_secret'), 'whsec_plain', 'a value from before sealing reads as it is');
    });

    it('refuses a value moved to another column, altered, or under a key it does not have, in words an operator can act on', () => {
      const box = new SecretBox(k1);
      const sealed = box.seal('whsec_abc', 'accounts.webhook_secret');
      assert.throws(() => box.open(sealed, 'webhook_endpoints.secret'), /does not open under key .*copied from another column/);
      const flipped = sealed.slice(0, -3) + (sealed.at(-3) === 'A' ? 'B' : 'A') + sealed.slice(-2);
      assert.throws(() => box.open(flipped, 'accounts.webhook_secret'), SecretKeyError);
      assert.throws(() => new SecretBox(k2).open(sealed, 'accounts.webhook_secret'), new RegExp(`sealed under key ${k1.id}, which this process does not have`));
      assert.equal(new SecretBox(k2, [k1]).open(sealed, 'accounts.webhook_secret'), 'whsec_abc', 'a previous key still opens');
      assert.throws(() => parseSecretKey('too-short', 'SECRETS_KEY'), /SECRETS_KEY must be 32 random bytes/);
    });

    it('generates a development key file with mode 0600 once, says so, and reads a named key file as given', () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mediasvc-keys-'));
      try {
        const settings: SecretsSettings = { previousKeys: [], keyFile: path.join(dir, 'secrets.key'), keyFileIsDefault: true };
        const warnings: string[] = [];
        const first = loadSecretBox(settings, (m) => warnings.push(m));
        assert.equal(fs.statSync(settings.keyFile).mode & 0o777, 0o600);
        assert.equal(warnings.length, 1);
        assert.match(warnings[0]!, /generated a key for stored secrets in .*secrets\.key \(mode 0600\); set SECRETS_KEY or SECRETS_KEY_FILE in production/);
        const again = loadSecretBox(settings, (m) => warnings.push(m));
        assert.equal(again.current.id, first.current.id);
        assert.equal(warnings.length, 1, 'no warning once the file exists');
        assert.throws(() => loadSecretBox({ ...settings, keyFile: path.join(dir, 'missing.key'), keyFileIsDefault: false }, () => undefined), /SECRETS_KEY_FILE names .*missing\.key, which does not exist/);
        const fromEnv = loadSecretBox({ ...settings, key: newSecretKeyText() }, () => undefined);
        assert.notEqual(fromEnv.current.id, first.current.id, 'SECRETS_KEY wins over the file');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('in the database (SQLite, the way a dump or a backup sees it)', function () {
    let h: ApiHarness;
    let rx: Receiver;
    let account: { accountId: string; key: string };
    const env = () => ({ DATA_DIR: h.config.dataDir, DATABASE_URL: '', SECRETS_KEY: '', SECRETS_KEY_FILE: '', SECRETS_PREVIOUS_KEYS: '' });

    before(async () => {
      h = await startApiHarness('sqlite');
      rx = await startReceiver();
      account = await h.newAccount('pro');
    });
    after(async () => {
      await rx?.close();
      await h?.close();
    });

    const accountSecret = async () => (await h.orm.em.fork().findOneOrFail(Account, account.accountId)).webhookSecret;

    it('a dump holds no webhook endpoint secret, no account webhook secret and no download-link key, and the service still signs with them', async () => {
      const created = await h.request('POST', '/v1/webhooks', { key: account.key, body: { url: rx.url('/sealed'), events: [] } });
      assert.equal(created.status, 201, created.text);
      const endpointSecret = created.body.secret as string;
      assert.match(endpointSecret, /^whsec_/);
      const linkKey = await serverSecret(h.orm.em.fork(), 'file-links');
      const perJob = await accountSecret();
      assert.match(perJob, /^whsec_/);

      const dump = await sqliteDump(h.config.sqlitePath);
      for (const [name, secret] of [['endpoint secret', endpointSecret], ['account secret', perJob], ['link key', linkKey]] as const) {
        assert.ok(!dump.includes(secret), `the dump holds the ${name}`);
        assert.ok(!dump.includes(secret.replace(/^whsec_/, '')), `the dump holds the ${name}'s key material`);
      }
      assert.doesNotMatch(dump, /whsec_/);
      assert.equal(dump.match(/'enc:v1:[0-9a-f]{8}:/g)?.length, 3, 'the three secrets, each sealed');

      // the test call signs with the secret the endpoint was given, read back from its sealed row
      const test = await h.request('POST', `/v1/webhooks/${created.body.id}/test`, { key: account.key });
      assert.equal(test.status, 200, test.text);
      const got = rx.received.find((r) => r.path === '/sealed');
      assert.ok(got, 'the test delivery arrived');
      // Standard Webhooks, computed here from its definition
      const signed = `${String(got.headers['webhook-id'])}.${String(got.headers['webhook-timestamp'])}.${got.body}`;
      const expected = `v1,${crypto.createHmac('sha256', Buffer.from(endpointSecret.slice('whsec_'.length), 'base64')).update(signed).digest('base64')}`;
      assert.ok(String(got.headers['webhook-signature']).split(' ').includes(expected), `signature ${String(got.headers['webhook-signature'])} is not ${expected}`);
    });

    it('rows stored in plaintext by an older release are sealed on the next start, and read back the same', async () => {
      const conn = h.orm.em.getConnection();
      const legacy = `whsec_${crypto.randomBytes(32).toString('base64')}`;
      const legacyEndpoint = `whsec_${crypto.randomBytes(32).toString('base64')}`;
      await conn.execute('update accounts set webhook_secret = ? where id = ?', [legacy, account.accountId], 'run');
      const endpoint = await h.orm.em.fork().findOneOrFail(WebhookEndpoint, { accountId: account.accountId });
      await conn.execute('update webhook_endpoints set secret = ? where id = ?', [legacyEndpoint, endpoint.id], 'run');
      assert.ok((await sqliteDump(h.config.sqlitePath)).includes(legacy), 'the older release left it in plaintext');

      // what every start does after its migrations (openOrm with migrate), run by the CLI's migrate command
      await cli(env(), 'migrate');
      const dump = await sqliteDump(h.config.sqlitePath);
      assert.ok(!dump.includes(legacy) && !dump.includes(legacyEndpoint), 'sealed by the start');
      assert.equal(await accountSecret(), legacy);
      assert.equal((await h.orm.em.fork().findOneOrFail(WebhookEndpoint, endpoint.id)).secret, legacyEndpoint);
      assert.deepEqual(await resealStoredSecrets(h.orm.em.fork()), { sealed: 0, rekeyed: 0, current: 3 });
    });

    it('`secrets rotate --new-key` re-seals every secret under a new key, a running process follows, and --forget-previous leaves one key', async () => {
      const keyFile = path.join(h.config.dataDir, 'secrets.key');
      const before = readKeyFile(keyFile);
      assert.equal(before.length, 1);
      const secrets = { account: await accountSecret(), link: await serverSecret(h.orm.em.fork(), 'file-links') };

      const out = (await cli(env(), 'secrets', 'rotate', '--new-key')).join('\n');
      const keys = readKeyFile(keyFile);
      assert.equal(keys.length, 2, 'the new key first, the old one kept for processes still running');
      assert.equal(keys[1], before[0]);
      const newId = parseSecretKey(keys[0]!, 'new').id;
      assert.match(out, new RegExp(`sealed under key ${newId}: 3 re-sealed from a previous key, 0 sealed from plaintext, 0 already current`));
      const dump = await sqliteDump(h.config.sqlitePath);
      assert.equal(dump.match(new RegExp(`'enc:v1:${newId}:`, 'g'))?.length, 3);
      assert.ok(!dump.includes(`enc:v1:${parseSecretKey(before[0]!, 'old').id}:`), 'nothing left under the old key');

      // this process loaded only the old key; it finds the new one in the file when it meets it
      assert.equal(await accountSecret(), secrets.account);
      assert.equal(await serverSecret(h.orm.em.fork(), 'file-links'), secrets.link);
      assert.match(await rotateWebhookSecret(h.orm.em.fork(), account.accountId), /^whsec_/);

      const forget = (await cli(env(), 'secrets', 'rotate', '--forget-previous')).join('\n');
      assert.match(forget, /0 re-sealed from a previous key, 0 sealed from plaintext, 3 already current; previous keys removed/);
      assert.deepEqual(readKeyFile(keyFile), [keys[0]]);
      assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
    });

    it('with SECRETS_KEY the operator changes the key: the old one in SECRETS_PREVIOUS_KEYS opens the rows until `secrets rotate` moves them', async () => {
      const fileKey = readKeyFile(path.join(h.config.dataDir, 'secrets.key'))[0]!;
      const next = newSecretKeyText();
      const withEnvKey = { ...env(), SECRETS_KEY: next, SECRETS_PREVIOUS_KEYS: fileKey };
      await assert.rejects(cli(withEnvKey, 'secrets', 'rotate', '--new-key'), /SECRETS_KEY is set, so the key is yours to change/);
      const out = (await cli(withEnvKey, 'secrets', 'rotate')).join('\n');
      assert.match(out, /3 re-sealed from a previous key/);
      const alone = { ...env(), SECRETS_KEY: next };
      const plain = (await cli(alone, 'accounts', 'webhook-secret', account.accountId)).pop()!;
      assert.match(plain, /^whsec_/);
      assert.ok(!(await sqliteDump(h.config.sqlitePath)).includes(plain));
      // the harness holds the file's key only: it cannot open rows under the operator's key, and says which key it lacks
      await assert.rejects(accountSecret(), new RegExp(`sealed under key ${parseSecretKey(next, 'next').id}, which this process does not have`));
      // back under the file's key
      await cli({ ...env(), SECRETS_PREVIOUS_KEYS: next }, 'secrets', 'rotate');
      assert.equal(await accountSecret(), plain);
    });
  });
});
