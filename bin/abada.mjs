#!/usr/bin/env node
// The `abada` CLI: registers tsx's ESM loader in this process and runs server/cli.ts, so the CLI needs no
// build step (`npx abada …` from the repository, or a linked install).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../server/cli.ts');
process.exitCode = await main(process.argv.slice(2));
