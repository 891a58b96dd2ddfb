/**
 * Whether this process traces, read once from the standard OpenTelemetry variables: on when an OTLP
 * endpoint or a traces exporter is named, off with `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`.
 * Off means no SDK is even loaded (sdk.ts imports it on demand).
 */

type Env = Record<string, string | undefined>;

export type TracingSettings = NonNullable<ReturnType<typeof readTracingSettings>>;

export class TracingConfigError extends Error {
  override name = 'TracingConfigError';
}

const SUPPORTED = new Set(['otlp', 'console', 'none']);

/** The settings, or null when tracing is off. Throws TracingConfigError on a setting this build cannot honour. */
export function readTracingSettings(env: Env, defaultServiceName: string) {
  const v = (name: string) => env[name]?.trim() || null;
  if (v('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return null;
  const exporters = (v('OTEL_TRACES_EXPORTER') ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const unsupported = exporters.filter((e) => !SUPPORTED.has(e));
  if (unsupported.length)
    throw new TracingConfigError(
      `OTEL_TRACES_EXPORTER=${unsupported.join(',')} is not supported: use otlp (OTLP/HTTP), console or none.`,
    );
  if (exporters.includes('none')) return null;
  const tracesEndpoint = v('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = v('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (!exporters.length && !tracesEndpoint && !endpoint) return null;
  const protocol = v('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? v('OTEL_EXPORTER_OTLP_PROTOCOL');
  if (protocol === 'grpc')
    throw new TracingConfigError(
      'OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: Abada exports OTLP over HTTP (port 4318 of a collector).',
    );
  const exporter = exporters.includes('otlp') || !exporters.length ? 'otlp' : 'console';
  let url: string | null = null;
  if (exporter === 'otlp') {
    // The specification: a signal-specific endpoint is used as is; the general one gets /v1/traces.
    url = tracesEndpoint ?? `${(endpoint ?? 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`;
    if (!URL.canParse(url))
      throw new TracingConfigError(`The OTLP endpoint "${url}" is not a URL (e.g. http://collector:4318).`);
  }
  return {
    exporter,
    /** the OTLP/HTTP traces URL (`…/v1/traces`); null for the console exporter */
    url,
    serviceName: v('OTEL_SERVICE_NAME') ?? defaultServiceName,
    /** prompts, arguments and answers go into spans, redacted */
    captureContent: v('ABADA_OTEL_CAPTURE_CONTENT')?.toLowerCase() === 'true',
  };
}
