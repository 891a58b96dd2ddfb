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

/** A cumulative histogram keyed by its label set. */
export class Histogram {
  private series = new Map<
    string,
    { labels: Record<string, string>; counts: number[]; sum: number; n: number }
  >();
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
    const out = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const s of this.series.values())
      out.push(...histogramLines(this.name, s.labels, this.buckets, s.counts, s.n, s.sum));
    return out;
  }
}

export function histogramLines(
  name: string,
  l: Record<string, string>,
  buckets: number[],
  counts: number[],
  n: number,
  sum: number,
) {
  return [
    ...buckets.map((b, i) => `${name}_bucket${labels({ ...l, le: String(b) })} ${counts[i]}`),
    `${name}_bucket${labels({ ...l, le: '+Inf' })} ${n}`,
    `${name}_sum${labels(l)} ${sum}`,
    `${name}_count${labels(l)} ${n}`,
  ];
}

export type Row = [Record<string, string>, number];

/** A gauge or counter family; a bare number is its one unlabelled value. */
export function family(name: string, type: 'gauge' | 'counter', help: string, rows: Row[] | number) {
  return [
    `# HELP ${name} ${help}`,
    `# TYPE ${name} ${type}`,
    ...(typeof rows === 'number' ? [[{}, rows] as Row] : rows).map(([l, v]) => `${name}${labels(l)} ${v}`),
  ];
}
