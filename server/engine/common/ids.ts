/**
 * Row ids made in the engine, so a command sends a row and the rows pointing at it without waiting for
 * the id: UUIDv7 (RFC 9562), laid out as the tables' default `abada_uuid_v7()` (migration 0016; 48 bits of
 * Unix ms, version 7, variant 10, 74 random bits), so ids made here and there sort together by time.
 */
import { randomFillSync } from 'node:crypto';

/** Random bytes drawn 256 ids at a time (one call to the CSPRNG per 256 ids). */
const POOL = Buffer.alloc(16 * 256);
let offset = POOL.length;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function uuidV7(now: number = Date.now()): string {
  if (offset === POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  const b = POOL.subarray(offset, offset + 16);
  offset += 16;
  b[0] = Math.floor(now / 2 ** 40) & 0xff;
  b[1] = Math.floor(now / 2 ** 32) & 0xff;
  b[2] = (now >>> 24) & 0xff;
  b[3] = (now >>> 16) & 0xff;
  b[4] = (now >>> 8) & 0xff;
  b[5] = now & 0xff;
  b[6] = (b[6] & 0x0f) | 0x70;
  b[8] = (b[8] & 0x3f) | 0x80;
  let s = '';
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) s += '-';
    s += HEX[b[i]];
  }
  return s;
}
