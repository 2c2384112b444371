import { randomBytes } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { loadConfig } from '../../src/config';
import { decodeMasterKey, loadMasterKey, SecretBox, SecretBoxError } from '../../src/crypto/secret-box';
import { startGateway } from '../../src/main';
import { createTestDatabase } from '../support/database';
import { api } from '../support/gateway';
import { tempDataDir } from '../files/helpers';

const SECRET = 'sk-master-SECRET-77e1c0ffee5eed';

/** A logger whose every line is kept, to prove what is (and is not) written. */
function capturingLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: pino({ level: 'trace' }, sink), lines, text: () => lines.join('') };
}

/** A gateway over a fresh database with the given DATA_DIR and a logger we can read. */
async function start(dataDir: string, env: Record<string, string> = {}) {
  const database = await createTestDatabase();
  const key = `gw_test_${randomBytes(16).toString('hex')}`;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    GATEWAY_BOOTSTRAP_API_KEY: key,
    DATA_DIR: dataDir,
    ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
    ...env,
  });
  config.pgliteDir = database.pgliteDir;
  const log = capturingLogger();
  const gateway = await startGateway(config, log.logger, { pgliteLoadDataDir: database.pgliteLoadDataDir });
  return {
    url: gateway.url,
    key,
    gateway,
    log,
    async stop() {
      await gateway.stop();
      await database.drop();
    },
  };
}

describe('GATEWAY_MASTER_KEY', () => {
  const hex = randomBytes(32).toString('hex');
  const base64 = Buffer.from(hex, 'hex').toString('base64');

  it('accepts 32 bytes as hex, base64 or base64url', () => {
    for (const value of [hex, hex.toUpperCase(), base64, base64.replace(/=$/, ''), Buffer.from(hex, 'hex').toString('base64url')]) {
      expect(loadConfig({ GATEWAY_MASTER_KEY: value }).masterKey).toBe(value);
      expect(decodeMasterKey(value)?.toString('hex')).toBe(hex);
    }
  });

  it('refuses anything else at start-up with a clear message that does not quote it', () => {
    const bad = ['too-short', hex.slice(2), hex + 'ab', randomBytes(16).toString('base64'), randomBytes(48).toString('base64'), ''];
    for (const value of bad) {
      let message = '';
      try {
        loadConfig({ GATEWAY_MASTER_KEY: value });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/GATEWAY_MASTER_KEY: must be 32 bytes, given as base64 \(44 characters\) or hex \(64 characters\)/);
      if (value) expect(message).not.toContain(value);
    }
  });
});

describe('the master key file', () => {
  it('is generated once (mode 0600), logged without the key, and reused afterwards', async () => {
    const data = await tempDataDir('gw-master-');
    try {
      const first = capturingLogger();
      const key = loadMasterKey({ masterKey: undefined, dataDir: data.dir }, first.logger);
      const file = join(data.dir, 'master.key');
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const written = await readFile(file, 'utf8');
      expect(decodeMasterKey(written)?.equals(key)).toBe(true);
      expect(first.text()).toMatch(/generated a new master key/);

      const second = capturingLogger();
      expect(loadMasterKey({ masterKey: undefined, dataDir: data.dir }, second.logger).equals(key)).toBe(true);
      expect(await readFile(file, 'utf8')).toBe(written);
      expect(second.text()).not.toMatch(/generated/);
      expect(second.text()).toMatch(/using the master key from DATA_DIR/);

      for (const text of [first.text(), second.text()]) {
        expect(text).not.toContain(key.toString('base64'));
        expect(text).not.toContain(key.toString('hex'));
      }
    } finally {
      await data.remove();
    }
  });

  it('is not created when GATEWAY_MASTER_KEY is set, and a corrupt file stops start-up', async () => {
    const data = await tempDataDir('gw-master-');
    try {
      const log = capturingLogger();
      const hex = randomBytes(32).toString('hex');
      expect(loadMasterKey({ masterKey: hex, dataDir: data.dir }, log.logger).toString('hex')).toBe(hex);
      await expect(stat(join(data.dir, 'master.key'))).rejects.toMatchObject({ code: 'ENOENT' });

      await writeFile(join(data.dir, 'master.key'), 'not a key\n', { mode: 0o600 });
      expect(() => loadMasterKey({ masterKey: undefined, dataDir: data.dir }, log.logger)).toThrow(/master key file .* is invalid/);
    } finally {
      await data.remove();
    }
  });

  it('a restarted gateway reuses the key: what the first sealed, the second can open', async () => {
    const data = await tempDataDir('gw-master-');
    try {
      const one = await start(data.dir);
      const keyFile = await readFile(join(data.dir, 'master.key'), 'utf8');
      const created = await api(one, 'POST', '/v1/integrations', { body: { slug: 'persisted', provider: 'openai', credentials: { api_key: SECRET } } });
      expect(created.status).toBe(200);
      const [row] = await one.gateway.services.db.prisma.$queryRawUnsafe<{ id: string; encrypted_credentials: string }[]>(
        "SELECT id, encrypted_credentials FROM integrations WHERE slug = 'persisted'",
      );
      // Failures on the way must not leak the secret either.
      await api(one, 'POST', '/v1/integrations', { body: { slug: 'persisted', provider: 'openai', credentials: { api_key: SECRET } } });
      await api(one, 'POST', '/v1/integrations', { body: { slug: 'x', provider: 'openai', credentials: { api_key: SECRET, extra: SECRET } } });
      await api(one, 'POST', '/v1/integrations', { rawBody: `{"credentials": {"api_key": ${SECRET}}}`, headers: { 'content-type': 'application/json' } });
      await one.stop();
      expect(one.log.text()).toMatch(/generated a new master key/);

      const two = await start(data.dir);
      await two.stop();
      expect(await readFile(join(data.dir, 'master.key'), 'utf8')).toBe(keyFile);
      expect(two.log.text()).not.toMatch(/generated a new master key/);
      expect(two.log.text()).toMatch(/using the master key from DATA_DIR/);

      const box = new SecretBox(decodeMasterKey(keyFile)!);
      expect(JSON.parse(box.open(row.encrypted_credentials, `integration:${row.id}`))).toEqual({ api_key: SECRET });

      const keyBytes = decodeMasterKey(keyFile)!;
      for (const text of [one.log.text(), two.log.text()]) {
        expect(text).not.toContain(SECRET);
        expect(text).not.toContain(keyBytes.toString('base64'));
        expect(text).not.toContain(keyBytes.toString('hex'));
      }
    } finally {
      await data.remove();
    }
  });
});

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('round-trips, with a fresh IV each time', () => {
    const a = box.seal(SECRET, 'ctx');
    const b = box.seal(SECRET, 'ctx');
    expect(a).not.toBe(b);
    expect(a.startsWith('v1.')).toBe(true);
    expect(a).not.toContain(SECRET);
    expect(box.open(a, 'ctx')).toBe(SECRET);
    expect(box.open(b, 'ctx')).toBe(SECRET);
  });

  it('refuses tampering, other associated data, another key and unknown versions', () => {
    const sealed = box.seal(SECRET, 'row-1');
    const parts = sealed.split('.');
    const flipped = Buffer.from(parts[4], 'base64url');
    flipped[0] ^= 1;
    const tampered = [...parts.slice(0, 4), flipped.toString('base64url')].join('.');
    expect(() => box.open(tampered, 'row-1')).toThrow(SecretBoxError);
    expect(() => box.open(sealed, 'row-2')).toThrow(/failed authentication/);
    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'row-1')).toThrow(/another master key/);
    expect(() => box.open(sealed.replace(/^v1/, 'v9'), 'row-1')).toThrow(/unknown format or version/);
    expect(() => new SecretBox(randomBytes(16))).toThrow(/32 bytes/);
  });
});
