/** Small display helpers shared by the pages. */

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** "2 h 14 min left", "overdue by 5 min". */
export function timeLeft(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'no SLA';
  const ms = new Date(iso).getTime() - now;
  const abs = Math.abs(ms);
  const h = Math.floor(abs / 3_600_000);
  const m = Math.floor((abs % 3_600_000) / 60_000);
  const text = h > 0 ? `${h} h ${m} min` : `${m} min`;
  return ms >= 0 ? `${text} left` : `overdue by ${text}`;
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

export function money(usd: number | null | undefined): string {
  return usd == null ? '—' : `$${usd.toFixed(4)}`;
}

/** Input and output tokens of a step's usage, whichever spelling was stored; null when it has none. */
export function usageTokens(usage: unknown): { input: number; output: number } | null {
  if (!usage || typeof usage !== 'object') return null;
  const u = usage as Record<string, unknown>;
  const input = u.inputTokens ?? u.input_tokens ?? u.prompt_tokens;
  const output = u.outputTokens ?? u.output_tokens ?? u.completion_tokens;
  if (input == null && output == null) return null;
  return { input: Number(input ?? 0), output: Number(output ?? 0) };
}

/** A step's tokens for people: "12 in / 3 out", or — when its usage has none. */
export function tokens(usage: unknown): string {
  const t = usageTokens(usage);
  return t ? `${t.input} in / ${t.output} out` : '—';
}

/** A length of time for people: "350 ms", "1.5 s", "3 min 20 s", "2 h 5 min". */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${Math.round(s % 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}
