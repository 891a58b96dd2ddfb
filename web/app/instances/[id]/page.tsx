'use client';
/**
 * One instance as a trace: the process picture with the path taken, the conversation rebuilt from the
 * journal, the steps over time (waits and cost), then the history and each task's journal folded under
 * it; the audit badge stays at the top. Live via taskChanged.
 */
import Link from 'next/link';
import { useParams } from 'next/navigation';
import { useEffect } from 'react';
import { useQuery, useSubscription } from 'urql';
import { StateBadge } from '../../../components/Badges';
import { Journal } from '../../../components/Journal';
import { isSpec } from '../../../components/flow/graph';
import { ProcessPicture } from '../../../components/flow/ProcessPicture';
import { Conversation } from '../../../components/trace/Conversation';
import { HistoryList } from '../../../components/trace/HistoryList';
import { Waterfall } from '../../../components/trace/Waterfall';
import { sentence } from '../../../lib/errors';
import { json, when } from '../../../lib/format';
import { DefinitionSpecQuery, InstanceQuery, TaskChanged } from '../../../lib/queries';

export default function InstancePage() {
  const { id } = useParams<{ id: string }>();
  const [{ data, error }, refetch] = useQuery({ query: InstanceQuery, variables: { id } });
  const key = data?.processInstance?.key;
  const [defs] = useQuery({ query: DefinitionSpecQuery, variables: { key: key ?? '' }, pause: !key });
  const [live] = useSubscription({ query: TaskChanged, variables: { id } });
  useEffect(() => {
    if (live.data) refetch({ requestPolicy: 'network-only' });
  }, [live.data, refetch]);
  useEffect(() => {
    // history rows written without a task change (e.g. the end event) still show within seconds
    const t = setInterval(() => refetch({ requestPolicy: 'network-only' }), 5000);
    return () => clearInterval(t);
  }, [refetch]);

  if (error && !data) return <p className="error-box">{sentence(error)}</p>;
  if (!data) return <p className="muted">Loading…</p>;
  const i = data.processInstance;
  if (!i) return <p className="error-box">This instance does not exist, or you cannot see it.</p>;
  const audit = data.verifyAudit;
  const spec = defs.data?.definitions.find((d) => d.version === i.version)?.spec;

  return (
    <article className="detail">
      <p>
        <Link href="/instances">← Instances</Link>
      </p>
      <div className="page-head">
        <h1>
          {i.key} v{i.version}
        </h1>
        <span data-testid="instance-state">
          <StateBadge state={i.state} />
        </span>
        <span
          className={`badge ${audit.valid ? 'audit-ok' : 'audit-broken'}`}
          data-testid="audit"
          title={audit.headHash ?? undefined}
        >
          {audit.valid ? `audit chain verified (${audit.rows} rows)` : `audit chain broken at row ${audit.firstBrokenSeq}: ${audit.reason ?? ''}`}
        </span>
      </div>
      <p className="muted small">
        {i.id} · started {when(i.createdAt)}
        {i.endedAt ? ` · ended ${when(i.endedAt)}` : ''}
        {i.currentNodeId ? ` · at ${i.currentNodeId}` : ''}
        {i.businessKey ? ` · ${i.businessKey}` : ''}
      </p>
      {spec && isSpec(spec) ? (
        <ProcessPicture
          spec={spec}
          instance={{ taskNodes: i.tasks.map((t) => t.nodeId), current: i.currentNodeId ?? null, ended: i.state === 'COMPLETED' }}
        />
      ) : null}
      <Conversation tasks={i.tasks} inputs={i.variables} history={i.history} />
      <Waterfall tasks={i.tasks} history={i.history} startedAt={i.createdAt} endedAt={i.endedAt ?? null} />
      <details className="card fold">
        <summary>
          <h2 className="inline">History ({i.history.length} events)</h2>
        </summary>
        <HistoryList history={i.history} />
      </details>
      <details className="card fold">
        <summary>
          <h2 className="inline">Variables</h2>
        </summary>
        <pre className="code">{json(i.variables)}</pre>
      </details>
      <details className="card fold">
        <summary>
          <h2 className="inline">Tasks and their journals ({i.tasks.length})</h2>
        </summary>
        {i.tasks.map((t) => (
          <section key={t.id} data-testid={`task-${t.nodeId}`}>
            <h3>
              {t.nodeId} <span className="muted small">({t.nodeType}, topic {t.topicName})</span> <StateBadge state={t.state} />
            </h3>
            <p className="muted small">
              attempt {t.attempt} of {t.maxAttempts}
              {t.workerId ? ` · worker ${t.workerId}` : ''}
              {t.lockExpiresAt ? ` · lease until ${when(t.lockExpiresAt)}` : ''}
              {t.errorType ? ` · ${t.errorType}: ${t.errorMessage ?? ''}` : ''}
            </p>
            <Journal taskId={t.id} steps={t.steps} history={i.history} />
          </section>
        ))}
      </details>
    </article>
  );
}
