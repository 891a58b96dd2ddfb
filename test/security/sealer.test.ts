/**
 * The sealing of step payloads and secrets (AES-256-GCM, `keyId.iv.tag.ciphertext`): every seal has its
 * own IV — also across refills of the IV pool — old keys keep opening their rows after a rotation, and a
 * changed byte is refused. And the SHA-256 the engine uses everywhere equals node:crypto's Hash.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Sealer } from '../../server/engine/common/crypto.js';
import { sha256Hex } from '../../server/shared/canonical.js';

const k1 = randomBytes(32);
const k2 = randomBytes(32);

describe('Sealer', () => {
  it('opens what it sealed, with a fresh 96-bit IV every time (2,000 seals: several pool refills)', () => {
    const sealer = new Sealer({ currentKeyId: 'k1', keys: new Map([['k1', k1]]) });
    const ivs = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const sealed = sealer.sealJson({ i, text: 'refund order A-1001' });
      const [keyId, iv, tag, ct] = sealed.split('.');
      expect(keyId).toBe('k1');
      expect(Buffer.from(iv, 'base64url')).toHaveLength(12);
      expect(Buffer.from(tag, 'base64url')).toHaveLength(16);
      expect(ct.length).toBeGreaterThan(0);
      ivs.add(iv);
      expect(sealer.openJson(sealed)).toEqual({ i, text: 'refund order A-1001' });
    }
    expect(ivs.size).toBe(2000);
  });

  it('keeps opening rows of an older key after a rotation, and names the key that sealed', () => {
    const before = new Sealer({ currentKeyId: 'k1', keys: new Map([['k1', k1]]) });
    const old = before.seal('sealed with k1');
    const after = new Sealer({
      currentKeyId: 'k2',
      keys: new Map([
        ['k1', k1],
        ['k2', k2],
      ]),
    });
    expect(after.open(old)).toBe('sealed with k1');
    const fresh = after.seal('sealed with k2');
    expect(after.keyIdOf(fresh)).toBe('k2');
    expect(() => before.open(fresh)).toThrow(/key "k2" is not configured/);
  });

  it('refuses a changed ciphertext or tag', () => {
    const sealer = new Sealer({ currentKeyId: 'k1', keys: new Map([['k1', k1]]) });
    const [keyId, iv, tag, ct] = sealer.seal('amount: 89 EUR').split('.');
    const flipped = Buffer.from(ct, 'base64url');
    flipped[0] ^= 1;
    expect(() => sealer.open([keyId, iv, tag, flipped.toString('base64url')].join('.'))).toThrow();
    const badTag = Buffer.from(tag, 'base64url');
    badTag[0] ^= 1;
    expect(() => sealer.open([keyId, iv, badTag.toString('base64url'), ct].join('.'))).toThrow();
  });
});

describe('sha256Hex', () => {
  it('equals node:crypto Hash for text and bytes', () => {
    for (const input of ['', 'abc', 'é→✓', 'x'.repeat(10_000)]) {
      expect(sha256Hex(input)).toBe(createHash('sha256').update(input).digest('hex'));
      const bytes = Buffer.from(input);
      expect(sha256Hex(bytes)).toBe(createHash('sha256').update(bytes).digest('hex'));
    }
  });
});
