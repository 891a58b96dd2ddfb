/**
 * When tracing is on, and that off costs nothing: without an OTEL_* setting no SDK module is loaded,
 * nothing is registered, and the helpers the hot paths call are bare calls.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { context } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import {
  continueTrace,
  readTracingSettings,
  startTracing,
  traceHeaders,
  traceLogFields,
  TracingConfigError,
  traceModelCall,
} from '../../server/telemetry/index.js';

describe('tracing settings', () => {
  it('is off without an endpoint or exporter, and with OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none', () => {
    expect(readTracingSettings({}, 'abada')).toBeNull();
    expect(
      readTracingSettings({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_HEADERS: 'a=b' }, 'abada'),
    ).toBeNull();
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(readTracingSettings({ ...endpoint, OTEL_SDK_DISABLED: 'true' }, 'abada')).toBeNull();
    expect(readTracingSettings({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }, 'abada')).toBeNull();
  });

  it('is on with an endpoint (…/v1/traces added) or a signal endpoint (as is) or an exporter', () => {
    expect(readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'abada')).toEqual({
      exporter: 'otlp',
      url: 'http://collector:4318/v1/traces',
      serviceName: 'abada',
      captureContent: false,
    });
    expect(
      readTracingSettings(
        {
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://tempo:4318/custom',
          OTEL_SERVICE_NAME: 'engine-eu',
          ABADA_OTEL_CAPTURE_CONTENT: 'true',
        },
        'abada',
      ),
    ).toEqual({
      exporter: 'otlp',
      url: 'https://tempo:4318/custom',
      serviceName: 'engine-eu',
      captureContent: true,
    });
    expect(readTracingSettings({ OTEL_TRACES_EXPORTER: 'otlp' }, 'abada-worker')?.url).toBe(
      'http://localhost:4318/v1/traces',
    );
    expect(readTracingSettings({ OTEL_TRACES_EXPORTER: 'console' }, 'abada')?.exporter).toBe('console');
  });

  it('refuses what this build cannot send, saying what it can', () => {
    expect(() => readTracingSettings({ OTEL_TRACES_EXPORTER: 'zipkin' }, 'abada')).toThrow(
      TracingConfigError,
    );
    expect(() => readTracingSettings({ OTEL_TRACES_EXPORTER: 'zipkin' }, 'abada')).toThrow(/otlp/);
    expect(() =>
      readTracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'abada'),
    ).toThrow(/OTLP over HTTP/);
  });

  it('off: startTracing loads no SDK, and the helpers are bare calls', async () => {
    expect(await startTracing({ serviceName: 'abada', env: {} })).toBeNull();
    // in a process of its own: test files share their worker's process, and another may have loaded it
    const root = path.resolve(import.meta.dirname, '../..');
    const script = [
      "import { startTracing } from './server/telemetry/index.ts';",
      "import nodeModule from 'node:module';",
      "await startTracing({ serviceName: 'abada', env: {} });",
      'const loaded = Object.keys(nodeModule.createRequire(import.meta.url).cache);',
      "console.log(JSON.stringify(loaded.filter((p) => p.includes('@opentelemetry/sdk-') || p.includes('@opentelemetry/exporter-') || p.includes('@opentelemetry/resources'))));",
    ].join('\n');
    const sdk = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        { cwd: root, env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_EXPORTER: '' } },
        (e: Error | null, stdout: string) =>
          e ? reject(e) : resolve(stdout.trim().split('\n').at(-1) ?? ''),
      ),
    );
    expect(JSON.parse(sdk)).toEqual([]);
    expect(traceHeaders()).toEqual({});
    expect(traceLogFields()).toEqual({});
    const answer = { message: {}, usage: { inputTokens: 1, outputTokens: 1 } };
    expect(
      await traceModelCall({ model: 'm', provider: 'p', sequence: 1, messages: [] }, async () => answer),
    ).toBe(answer);
    expect(
      continueTrace({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, () =>
        context.active(),
      ),
    ).toBe(context.active());
  });

  it('a worker started with a setting it cannot honour stops at once with one line saying why', async () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const run = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--import', 'tsx', 'server/worker/main.ts'],
        {
          cwd: root,
          env: {
            PATH: process.env.PATH ?? '',
            ABADA_URL: 'http://127.0.0.1:9',
            ABADA_TOKEN: 'unused',
            OTEL_TRACES_EXPORTER: 'zipkin',
          } as unknown as NodeJS.ProcessEnv,
        },
        (_e, _out, stderr) => resolve({ code: child.exitCode, stderr }),
      );
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('OTEL_TRACES_EXPORTER=zipkin is not supported');
  }, 30_000);
});
