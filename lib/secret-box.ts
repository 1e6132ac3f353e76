import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

// Secrets the service must read back (webhook signing secrets, the download-link key) are stored
// sealed with AES-256-GCM under a key that never enters the database: a dump or backup alone
// holds nothing that signs a webhook or a link.
//
// The nonce is synthetic: HMAC(key, purpose, plaintext), cut to 96 bits. The same secret under the
// same key always seals to the same text, so the ORM sees an unchanged column as unchanged, and a
// nonce repeats only for an identical plaintext, which GCM tolerates (it reveals equality, nothing
// more; every sealed secret is 32 random bytes). The purpose (table and column) is bound as
// associated data, so a sealed value copied into another column does not open.

/** Sealed values look like `enc:v1:<key id>:<base64url(nonce | ciphertext | tag)>`. */
export const SEALED_PREFIX = 'enc:v1:';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export class SecretKeyError extends Error {}

export interface SecretKey {
  /** The first 8 hex digits of SHA-256 of the key: names the key in a sealed value without revealing it. */
  id: string;
  key: Buffer;
}

/** Parses a 32-byte key written as 64 hex digits or as base64 / base64url. */
export function parseSecretKey(text: string, where: string): SecretKey {
  const t = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(t) ? Buffer.from(t, 'hex') : /^[A-Za-z0-9+/_-]{43}=?$/.test(t) ? Buffer.from(t, 'base64') : null;
  if (!key || key.length !== 32) throw new SecretKeyError(`${where} must be 32 random bytes as 64 hex digits or base64 (for example: openssl rand -base64 32)`);
  return { id: crypto.createHash('sha256').update(key).digest('hex').slice(0, 8), key };
}

export function newSecretKeyText(): string {
  return crypto.randomBytes(32).toString('base64');
}

export function isSealed(stored: string): boolean {
  return stored.startsWith(SEALED_PREFIX);
}

export class SecretBox {
  constructor(
    readonly current: SecretKey,
    readonly previous: readonly SecretKey[] = [],
    /** Reads the keys again (a key file another process rotated); returns null when nothing changed. */
    private readonly reload?: () => SecretBox | null,
  ) {}

  // Sealing is deterministic, so both directions are remembered: the ORM opens an account's secret
  // on every authenticated request and seals it again to snapshot the entity.
  private readonly sealedMemo = new Map<string, string>();
  private readonly openedMemo = new Map<string, string>();

  seal(plaintext: string, purpose: string): string {
    return remember(this.sealedMemo, `${this.current.id}\0${purpose}\0${plaintext}`, () => this.sealNow(plaintext, purpose));
  }

  /** Opens a sealed value; a value stored before sealing existed (plaintext) is returned as it is, until the start-up pass seals it. */
  open(stored: string, purpose: string): string {
    if (!isSealed(stored)) return stored;
    return remember(this.openedMemo, `${purpose}\0${stored}`, () => this.openNow(stored, purpose));
  }

  private sealNow(plaintext: string, purpose: string): string {
    const { id, key } = this.current;
    const data = Buffer.from(plaintext, 'utf8');
    const nonce = crypto.createHmac('sha256', key).update(`nonce\0${purpose}\0`).update(data).digest().subarray(0, NONCE_BYTES);
    const cipher = crypto.createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(Buffer.from(purpose, 'utf8'));
    const sealed = Buffer.concat([nonce, cipher.update(data), cipher.final(), cipher.getAuthTag()]);
    return `${SEALED_PREFIX}${id}:${sealed.toString('base64url')}`;
  }

  private openNow(stored: string, purpose: string): string {
    const rest = stored.slice(SEALED_PREFIX.length);
    const colon = rest.indexOf(':');
    const keyId = rest.slice(0, colon);
    const k = this.keyById(keyId);
    if (!k) throw new SecretKeyError(`a stored secret (${purpose}) is sealed under key ${keyId}, which this process does not have; give it that key in SECRETS_KEY, SECRETS_PREVIOUS_KEYS or the key file`);
    const raw = Buffer.from(rest.slice(colon + 1), 'base64url');
    const decipher = crypto.createDecipheriv('aes-256-gcm', k.key, raw.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(purpose, 'utf8'));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretKeyError(`a stored secret (${purpose}) does not open under key ${keyId}: it was altered, or copied from another column`);
    }
  }

  /** True when the value is sealed under the current key (nothing for a rotation to do). */
  isCurrent(stored: string): boolean {
    return stored.startsWith(`${SEALED_PREFIX}${this.current.id}:`);
  }

  private keyById(id: string): SecretKey | undefined {
    const own = [this.current, ...this.previous].find((k) => k.id === id);
    if (own || !this.reload) return own;
    const fresh = this.reload();
    if (!fresh) return undefined;
    // adopt the file's keys: a rotation by `mediasvc secrets rotate` while this process runs
    (this as { current: SecretKey }).current = fresh.current;
    (this as { previous: readonly SecretKey[] }).previous = fresh.previous;
    return [fresh.current, ...fresh.previous].find((k) => k.id === id);
  }
}

export interface SecretsSettings {
  /** SECRETS_KEY: the current key, given directly. */
  key?: string;
  /** SECRETS_PREVIOUS_KEYS: keys that still open older values (during a rotation). */
  previousKeys: string[];
  /** SECRETS_KEY_FILE, or DATA_DIR/secrets.key: first line the current key, further lines previous keys. */
  keyFile: string;
  /** True when no key file was named: one is generated on first start, for development. */
  keyFileIsDefault: boolean;
}

const MEMO_KEPT = 10_000;

function remember(memo: Map<string, string>, key: string, compute: () => string): string {
  let value = memo.get(key);
  if (value === undefined) {
    value = compute();
    if (memo.size >= MEMO_KEPT) memo.clear();
    memo.set(key, value);
  }
  return value;
}

function boxFromFile(file: string, extraPrevious: SecretKey[], reload?: () => SecretBox | null): SecretBox {
  const lines = fs.readFileSync(file, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  if (!lines.length) throw new SecretKeyError(`the key file ${file} holds no key`);
  const keys = lines.map((l, i) => parseSecretKey(l, `line ${i + 1} of ${file}`));
  return new SecretBox(keys[0]!, [...keys.slice(1), ...extraPrevious], reload);
}

/**
 * The key ring from the settings: SECRETS_KEY when set, else the key file. With neither, a key file
 * is generated (mode 0600) in DATA_DIR and `warn` says so: fine for one machine, not for several.
 */
export function loadSecretBox(s: SecretsSettings, warn: (msg: string) => void): SecretBox {
  const previous = s.previousKeys.map((k, i) => parseSecretKey(k, `key ${i + 1} of SECRETS_PREVIOUS_KEYS`));
  if (s.key) return new SecretBox(parseSecretKey(s.key, 'SECRETS_KEY'), previous);
  if (!fs.existsSync(s.keyFile)) {
    if (!s.keyFileIsDefault) throw new SecretKeyError(`SECRETS_KEY_FILE names ${s.keyFile}, which does not exist`);
    fs.mkdirSync(path.dirname(s.keyFile), { recursive: true });
    try {
      // 'wx': of two processes starting at once, one writes and both then read the same key
      fs.writeFileSync(s.keyFile, `${newSecretKeyText()}\n`, { mode: 0o600, flag: 'wx' });
      warn(`generated a key for stored secrets in ${s.keyFile} (mode 0600); set SECRETS_KEY or SECRETS_KEY_FILE in production, and keep the key out of database backups`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  const mode = fs.statSync(s.keyFile).mode & 0o077;
  if (mode) warn(`the key file ${s.keyFile} can be read by other users (mode ${(fs.statSync(s.keyFile).mode & 0o777).toString(8)}); chmod 600 it`);
  let seen = fs.readFileSync(s.keyFile, 'utf8');
  const reload = () => {
    const now = fs.readFileSync(s.keyFile, 'utf8');
    if (now === seen) return null;
    seen = now;
    return boxFromFile(s.keyFile, previous);
  };
  return boxFromFile(s.keyFile, previous, reload);
}

/** Writes a key file atomically with mode 0600: the current key first, then the previous ones. */
export function writeKeyFile(file: string, keyTexts: string[]): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${keyTexts.join('\n')}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/** The key texts of a key file, current first. */
export function readKeyFile(file: string): string[] {
  return fs.readFileSync(file, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
}
