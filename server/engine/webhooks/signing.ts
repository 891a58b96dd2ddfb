/**
 * Standard Webhooks signing (SPEC §13): `webhook-signature: v1,<base64 HMAC-SHA256(key, id + "." +
 * timestamp + "." + body)>`, computed by the `standardwebhooks` package's own `sign`, so a subscriber's
 * library computes, by construction, what we send.
 * Three kinds of secret exist (`keyOf`):
 * - `standard`: `whsec_` (optional) + standard base64: every secret generated or accepted today.
 * - `generated-url-safe`: `whsec_` + 43 URL-safe base64 characters, as Abada once generated; the same 32
 *   bytes, so a subscriber swaps `-`→`+`, `_`→`/` (docs/webhooks.md) and needs no rotation.
 * - `raw`: a subscriber-chosen secret that is not base64, once accepted: used as raw bytes (the library's
 *   `{ format: 'raw' }`), flagged `secretNeedsRotation`, and must be rotated.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

const PREFIX = 'whsec_';
const STANDARD = /^[A-Za-z0-9+/]+={0,2}$/;
const GENERATED_URL_SAFE = /^whsec_[A-Za-z0-9_-]{43}$/;
/** Shortest key accepted for a new secret (bytes): 128 bits, as HMAC-SHA256 guidance asks. */
const MIN_KEY_BYTES = 16;
const MAX_KEY_BYTES = 64;

function decodeStandard(b64: string): Buffer | null {
  if (!STANDARD.test(b64) || b64.length % 4 === 1) return null;
  const bytes = Buffer.from(b64, 'base64');
  // Round-trip: rejects trailing bits and misplaced padding that a lenient decoder would accept.
  const canonical = bytes.toString('base64');
  return canonical.replace(/=+$/, '') === b64.replace(/=+$/, '') ? bytes : null;
}

const bodyOf = (secret: string) => (secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret);

/** The HMAC key a secret stands for, and which of the three kinds it is. */
export function keyOf(secret: string): { kind: 'standard' | 'generated-url-safe' | 'raw'; key: Uint8Array } {
  const body = bodyOf(secret);
  const standard = decodeStandard(body);
  if (standard && standard.length > 0) return { kind: 'standard', key: standard };
  if (GENERATED_URL_SAFE.test(secret))
    return { kind: 'generated-url-safe', key: Buffer.from(body, 'base64url') };
  return { kind: 'raw', key: Buffer.from(secret, 'utf8') };
}

export function generateSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

/** Why a subscriber-chosen secret is refused, or null when it is a usable Standard Webhooks secret. */
export function secretProblem(secret: string): string | null {
  const { kind, key } = keyOf(secret);
  if (kind !== 'standard')
    return 'A webhook secret must be whsec_ followed by standard base64 (A–Z a–z 0–9 + /, = padding), as Standard Webhooks libraries expect; omit secret to have one generated.';
  if (bodyOf(secret).length % 4 !== 0)
    return 'A webhook secret must be padded base64 (a multiple of 4 characters, = at the end as needed): some Standard Webhooks libraries (Go) refuse it unpadded.';
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES)
    return `A webhook secret must encode ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes (got ${key.length}); omit secret to have one generated.`;
  return null;
}

/** `webhook-signature`: a space-separated `v1,<base64>` per secret (current first, then one in overlap). */
export function signStandard(secrets: string[], id: string, timestampSec: number, body: string): string {
  const at = new Date(timestampSec * 1000);
  return secrets.map((s) => new Webhook(keyOf(s).key, { format: 'raw' }).sign(id, at, body)).join(' ');
}

/**
 * The deprecated `Abada-Signature` header (kept for one release): `v1=<hex HMAC-SHA256(secret string,
 * timestamp + "." + body)>`, with the current secret only.
 */
export function signLegacy(secret: string, timestampSec: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestampSec}.${body}`).digest('hex')}`;
}
