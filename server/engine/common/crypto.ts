/**
 * AES-256-GCM sealing of secrets and step payloads. A sealed value is `keyId.iv.tag.ciphertext`
 * (base64url parts), so every row names the key that sealed it and old keys keep opening old rows after
 * a rotation.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { EncryptionKeys } from '../../config.js';

export class Sealer {
  constructor(private readonly keys: EncryptionKeys) {}

  get currentKeyId(): string {
    return this.keys.currentKeyId;
  }

  seal(plaintext: string): string {
    const keyId = this.keys.currentKeyId;
    const key = this.keys.keys.get(keyId)!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${keyId}.${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${ct.toString('base64url')}`;
  }

  open(sealed: string): string {
    const [keyId, iv, tag, ct] = sealed.split('.');
    const key = this.keys.keys.get(keyId);
    if (!key || iv === undefined || tag === undefined || ct === undefined) {
      throw new Error(`cannot open a sealed value: key "${keyId}" is not configured`);
    }
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }

  sealJson(value: unknown): string {
    return this.seal(JSON.stringify(value ?? null));
  }

  openJson<T = unknown>(sealed: string | null | undefined): T | null {
    if (sealed == null) return null;
    return JSON.parse(this.open(sealed)) as T;
  }

  keyIdOf(sealed: string): string {
    return sealed.slice(0, sealed.indexOf('.'));
  }
}
