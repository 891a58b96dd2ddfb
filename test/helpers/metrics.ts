/** Reading /metrics in tests: one sample of a series (`name` or `name{labels}`, as the exposition writes it). */

/** The value of `series` in a scraped /metrics body, or undefined when it has no sample. */
export function metricValue(body: string, series: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/**
 * Scrapes the engine's /metrics (no token: the test engine's default) and reads `series`; NaN when it
 * has no sample, so any count asserted on it fails.
 */
export async function scrapeMetric(engineUrl: string, series: string): Promise<number> {
  return metricValue(await (await fetch(`${engineUrl}/metrics`)).text(), series) ?? Number.NaN;
}
