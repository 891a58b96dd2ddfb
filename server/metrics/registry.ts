/**
 * The Prometheus text format, by hand: cumulative histograms kept in memory, and the lines of a gauge
 * or counter family. Small enough not to need a client library.
 */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const labels = (l: Record<string, string>) => {
  const parts = Object.entries(l).map(([k, v]) => `${k}="${esc(v)}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
};

/** One label set of a histogram: cumulative bucket counts, the sum and the number of observations. */
interface Series {
  labels: Record<string, string>;
  counts: number[];
  sum: number;
  n: number;
}

/** A cumulative histogram keyed by its label set. */
export class Histogram {
  private series = new Map<string, Series>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: number[] = LATENCY_BUCKETS,
  ) {}

  observe(value: number, l: Record<string, string> = {}) {
    const key = JSON.stringify(l);
    let s = this.series.get(key);
    if (!s) {
      s = { labels: l, counts: this.buckets.map(() => 0), sum: 0, n: 0 };
      this.series.set(key, s);
    }
    this.buckets.forEach((b, i) => {
      if (value <= b) s.counts[i]++;
    });
    s.sum += value;
    s.n++;
  }

  render(): string[] {
    return histogram(this.name, this.help, this.buckets, this.series.values());
  }
}

/** A histogram family: its HELP and TYPE lines, then each series' buckets, sum and count. */
export function histogram(name: string, help: string, buckets: number[], series: Iterable<Series>) {
  const out = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`];
  for (const { labels: l, counts, sum, n } of series)
    out.push(
      ...buckets.map((b, i) => `${name}_bucket${labels({ ...l, le: String(b) })} ${counts[i]}`),
      `${name}_bucket${labels({ ...l, le: '+Inf' })} ${n}`,
      `${name}_sum${labels(l)} ${sum}`,
      `${name}_count${labels(l)} ${n}`,
    );
  return out;
}

export type Row = [Record<string, string>, number];

/** A gauge or counter family; a bare number is its one unlabelled value. */
const family =
  (type: 'gauge' | 'counter') =>
  (name: string, help: string, rows: Row[] | number): string[] => [
    `# HELP ${name} ${help}`,
    `# TYPE ${name} ${type}`,
    ...(typeof rows === 'number' ? [[{}, rows] as Row] : rows).map(([l, v]) => `${name}${labels(l)} ${v}`),
  ];

export const gauge = family('gauge');
export const counter = family('counter');
