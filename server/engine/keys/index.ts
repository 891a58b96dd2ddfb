/** Rotating the encryption key of sealed payloads. */
export { countStale, rotateKeys } from './rotate.js';
