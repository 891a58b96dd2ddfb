/** APL front end: YAML source → validated, frozen deployment (pure; no database). */
export { validateSource } from './validate.js';
