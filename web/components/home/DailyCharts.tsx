'use client';
/**
 * The home page's three charts over the last days (recharts), each followed by the same numbers as a
 * table: a screen reader, a test and a person who wants the exact value read the table, not the bars.
 */
import type { ReactNode } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { ResultOf } from '../../lib/graphql';
import type { DailyStatsQuery } from '../../lib/queries';
import { duration } from '../../lib/format';

type Stats = ResultOf<typeof DailyStatsQuery>['dailyStats'];

const PALETTE = ['var(--chart-1)', 'var(--chart-2)', 'var(--chart-3)', 'var(--chart-4)', 'var(--chart-5)'];
const axis = { stroke: 'var(--muted)', fontSize: 12 };
const short = (day: string) => day.slice(5);
/** Dollar ticks that stay readable for fractions of a cent. */
const usd = (v: number) => (v === 0 ? '$0' : v >= 0.01 ? `$${v.toFixed(2)}` : `$${v.toPrecision(2)}`);

/** A median in seconds; a day with no decision has none (a dash). */
const median = (seconds: number | null | undefined) => (seconds == null ? '—' : duration(seconds * 1000));

function Figure({ id, title, children, table }: { id: string; title: string; children: ReactNode; table: ReactNode }) {
  return (
    <section className="card chart" aria-labelledby={`${id}-title`} data-testid={`chart-${id}`}>
      <h2 id={`${id}-title`}>{title}</h2>
      <div className="chart-box" aria-hidden="true">
        {children}
      </div>
      <details className="chart-values">
        <summary>Values as a table</summary>
        <div className="table-wrap">{table}</div>
      </details>
    </section>
  );
}

/** The numbers behind a chart: a caption for screen readers, one header row, the rows given. */
function ValuesTable({
  testId,
  caption,
  columns,
  children,
}: {
  testId: string;
  caption: string;
  columns: string[];
  children: ReactNode;
}) {
  return (
    <table className="list values" data-testid={testId}>
      <caption className="sr-only">{caption}</caption>
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c} scope="col">
              {c}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}

const tooltip = { contentStyle: { background: 'var(--card)', color: 'var(--text)' } };

export function ApprovalsChart({ stats }: { stats: Stats }) {
  const data = stats.approvals.map((d) => ({ ...d, medianMin: d.medianDecisionSeconds == null ? null : d.medianDecisionSeconds / 60 }));
  return (
    <Figure
      id="approvals"
      title="Approvals per day"
      table={
        <ValuesTable
          testId="values-approvals"
          caption="Approvals opened and decided per day, with the median time to decision"
          columns={['Day', 'Opened', 'Decided', 'Median time to decision']}
        >
          {stats.approvals.map((d) => (
            <tr key={d.day} data-day={d.day}>
              <th scope="row">{d.day}</th>
              <td data-col="opened">{d.opened}</td>
              <td data-col="decided">{d.decided}</td>
              <td data-col="median" data-seconds={d.medianDecisionSeconds ?? ''}>
                {median(d.medianDecisionSeconds)}
              </td>
            </tr>
          ))}
        </ValuesTable>
      }
    >
      <ResponsiveContainer width="100%" height={220}>
        <BarChart accessibilityLayer={false} data={data} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
          <CartesianGrid stroke="var(--line)" vertical={false} />
          <XAxis dataKey="day" tickFormatter={short} tick={axis} stroke="var(--muted)" />
          <YAxis allowDecimals={false} tick={axis} stroke="var(--muted)" />
          <Tooltip {...tooltip} />
          <Legend />
          <Bar dataKey="opened" name="opened" fill={PALETTE[0]} isAnimationActive={false} />
          <Bar dataKey="decided" name="decided" fill={PALETTE[1]} isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
      <p className="small muted chart-caption">Median time from opened to decided, by the day of the decision</p>
      <ResponsiveContainer width="100%" height={120}>
        <LineChart accessibilityLayer={false} data={data} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
          <XAxis dataKey="day" tickFormatter={short} tick={axis} stroke="var(--muted)" />
          <YAxis tick={axis} stroke="var(--muted)" tickFormatter={(v: number) => duration(v * 60_000)} width={72} />
          <Tooltip {...tooltip} />
          <Line dataKey="medianMin" name="median minutes to decision" stroke={PALETTE[2]} connectNulls isAnimationActive={false} />
        </LineChart>
      </ResponsiveContainer>
    </Figure>
  );
}

export function CostChart({ stats }: { stats: Stats }) {
  const models = [...new Set(stats.modelCost.map((c) => c.model))].sort();
  const data = stats.approvals.map(({ day }) => {
    const row: Record<string, number | string> = { day };
    for (const m of models) row[m] = stats.modelCost.find((c) => c.day === day && c.model === m)?.costUsd ?? 0;
    return row;
  });
  return (
    <Figure
      id="cost"
      title="Model cost per day, by model"
      table={
        <ValuesTable
          testId="values-cost"
          caption="Model cost in US dollars per day and model"
          columns={['Day', 'Model', 'Cost (USD)', 'Tokens in / out']}
        >
          {stats.modelCost.length === 0 ? (
            <tr>
              <td colSpan={4}>No model calls in these days.</td>
            </tr>
          ) : null}
          {stats.modelCost.map((c) => (
            <tr key={`${c.day}-${c.model}`} data-day={c.day} data-model={c.model}>
              <th scope="row">{c.day}</th>
              <td>{c.model}</td>
              <td data-col="cost" data-usd={c.costUsd}>
                ${c.costUsd.toFixed(6)}
              </td>
              <td>
                {c.inputTokens} / {c.outputTokens}
              </td>
            </tr>
          ))}
        </ValuesTable>
      }
    >
      <ResponsiveContainer width="100%" height={220}>
        <BarChart accessibilityLayer={false} data={data} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid stroke="var(--line)" vertical={false} />
          <XAxis dataKey="day" tickFormatter={short} tick={axis} stroke="var(--muted)" />
          <YAxis tick={axis} stroke="var(--muted)" tickFormatter={usd} width={72} />
          <Tooltip {...tooltip} />
          <Legend />
          {models.map((m, i) => (
            <Bar key={m} dataKey={m} stackId="cost" fill={PALETTE[i % PALETTE.length]} isAnimationActive={false} />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </Figure>
  );
}

export function IncidentsChart({ stats }: { stats: Stats }) {
  return (
    <Figure
      id="incidents"
      title="Incidents opened per day"
      table={
        <ValuesTable testId="values-incidents" caption="Incidents opened per day" columns={['Day', 'Opened']}>
          {stats.incidents.map((d) => (
            <tr key={d.day} data-day={d.day}>
              <th scope="row">{d.day}</th>
              <td data-col="opened">{d.opened}</td>
            </tr>
          ))}
        </ValuesTable>
      }
    >
      <ResponsiveContainer width="100%" height={180}>
        <BarChart accessibilityLayer={false} data={stats.incidents} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
          <CartesianGrid stroke="var(--line)" vertical={false} />
          <XAxis dataKey="day" tickFormatter={short} tick={axis} stroke="var(--muted)" />
          <YAxis allowDecimals={false} tick={axis} stroke="var(--muted)" />
          <Tooltip {...tooltip} />
          <Bar dataKey="opened" name="incidents" fill={PALETTE[3]} isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </Figure>
  );
}
