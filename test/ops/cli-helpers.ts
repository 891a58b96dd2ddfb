/**
 * Runs the `abada` CLI as a real child process and collects its exit code and output: server/cli.ts bundled
 * for the run (test/helpers/bundles.ts), or bin/abada.mjs itself with `{ bin: true }`.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { bundled } from '../helpers/bundles.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export const BIN = path.resolve('bin/abada.mjs');

export function abada(
  args: string[],
  env: Record<string, string>,
  stdin?: string,
  how: { bin?: boolean } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(how.bin ? [BIN] : bundled('cli')), ...args], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        ...env,
      } as unknown as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe'] as const,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}
