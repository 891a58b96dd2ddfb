/**
 * The soak's integrators (SPEC §13): graphql-ws subscribers on both engines that lose their connection
 * every few seconds and resume with `after:` (the typed client's subscribeResumable), while every
 * engine's LISTEN connection is terminated now and then. At the end each subscription's received
 * events are compared with what it should have received, read from the database: every approval
 * event after its start cursor that its principal may see (the soak's approvals are for finance-leads,
 * so the finance-only subscriber must receive none). Missing, duplicated, out-of-order or not-visible
 * events are violations.
 */
import pg from 'pg';
import {
  ApprovalChanged,
  ApprovalOpened,
  type ResumableSubscription,
  subscribeResumable,
} from '../server/client/index.js';
import type { Row } from './check.js';
import { gql } from './procs.js';

interface Watch {
  name: string;
  opened: boolean;
  groups: string[];
  start: number;
  positions: number[];
  sub: ResumableSubscription;
  refused: string | null;
}

const positionOf = (cursor: string) => Number(cursor.split('.')[1]);
const rnd = (a: number, b: number) => a + Math.random() * (b - a);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function human(url: string, admin: string, name: string, groups: string[]): Promise<string> {
  const r = await gql(
    url,
    admin,
    `mutation($i: CreatePrincipalInput!) { createPrincipal(input: $i) { token } }`,
    {
      i: { kind: 'HUMAN', name, groups },
    },
  );
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  return r.data.createPrincipal.token;
}

export interface SubscriberFaults {
  urls: string[];
  adminToken: string;
  databaseUrl: string;
  log: (line: string) => void;
  /** faults stop at this time (epoch ms) */
  until: number;
}

/** Starts the subscribers and their faults; `finish()` waits for them to catch up and checks them. */
export async function startSubscribers(c: SubscriberFaults) {
  const everyone = ['finance', 'finance-leads'];
  const people = [
    {
      name: 'soak-integrator-all',
      groups: everyone,
      token: await human(c.urls[0], c.adminToken, 'soak-integrator-all', everyone),
    },
    {
      name: 'soak-integrator-outside',
      groups: ['finance'],
      token: await human(c.urls[0], c.adminToken, 'soak-integrator-outside', ['finance']),
    },
  ];
  const head = await gql(c.urls[0], c.adminToken, '{ eventCursor }');
  const start = head.data.eventCursor as string;
  const watches: Watch[] = [];
  c.urls.forEach((url, e) => {
    for (const p of people)
      for (const opened of p.groups.length > 1 ? [true, false] : [true]) {
        const name = `${p.name}@${'AB'[e]}/${opened ? 'opened' : 'changed'}`;
        watches.push(watch(c, url, p.token, name, opened, p.groups, start));
      }
  });
  let interrupts = 0;
  let listenerKills = 0;
  const blips = (async () => {
    while (Date.now() < c.until) {
      await sleep(rnd(1500, 5000));
      const w = watches[Math.floor(Math.random() * watches.length)];
      w.sub.interrupt();
      interrupts++;
    }
  })();
  const kills = (async () => {
    const db = new pg.Client({ connectionString: c.databaseUrl });
    await db.connect();
    while (Date.now() < c.until) {
      await sleep(rnd(5000, 12_000));
      const r = await db.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'abada-listener'`,
      );
      listenerKills += r.rowCount ?? 0;
      c.log(`terminated ${r.rowCount} LISTEN connections`);
    }
    await db.end();
  })();

  return {
    async finish(): Promise<Row> {
      await Promise.all([blips, kills]);
      const db = new pg.Client({ connectionString: c.databaseUrl });
      await db.connect();
      try {
        // Caught up: each has at least what it should have (or 60 s passed); read again at the end, as
        // a sweep may still announce something.
        const expected = new Map<Watch, number[]>();
        const until = Date.now() + 60_000;
        for (;;) {
          for (const w of watches) expected.set(w, await expectedFor(db, w));
          const behind = watches.some((w) => w.positions.length < expected.get(w)!.length && !w.refused);
          if (!behind || Date.now() > until) break;
          await sleep(500);
        }
        let violations = 0;
        const figures: string[] = [];
        for (const w of watches) {
          const want = expected.get(w)!;
          const got = w.positions;
          const wanted = new Set(want);
          const missing = want.filter((p) => !got.includes(p)).length;
          const duplicates = got.length - new Set(got).size;
          const outOfOrder = got.filter((p, i) => i > 0 && p <= got[i - 1]).length;
          const unexpected = got.filter((p) => !wanted.has(p)).length;
          violations += missing + duplicates + outOfOrder + unexpected + (w.refused ? 1 : 0);
          figures.push(`${w.name} ${got.length}/${want.length}`);
          if (missing || duplicates || outOfOrder || unexpected)
            c.log(
              `subscriber ${w.name}: missing ${missing}, duplicates ${duplicates}, out of order ${outOfOrder}, not visible ${unexpected}`,
            );
        }
        const resumes = watches.reduce((a, w) => a + w.sub.resumes, 0);
        return {
          check: 'subscribers (received/expected)',
          figure: `${figures.join(', ')}; ${interrupts} disconnects, ${resumes} reconnections with after:, ${listenerKills} LISTEN connections terminated`,
          violations,
        };
      } finally {
        await db.end();
        await Promise.all(watches.map((w) => w.sub.dispose()));
      }
    },
  };
}

/** One resumable subscription (approvalOpened or approvalChanged) recording the positions it receives. */
function watch(
  c: SubscriberFaults,
  url: string,
  token: string,
  name: string,
  opened: boolean,
  groups: string[],
  after: string,
): Watch {
  const positions: number[] = [];
  const w: Omit<Watch, 'sub'> = { name, opened, groups, start: positionOf(after), positions, refused: null };
  const onRefused = (errors: readonly unknown[]) => {
    w.refused = JSON.stringify(errors).slice(0, 300);
    c.log(`subscriber ${name} refused: ${w.refused}`);
  };
  const common = { url, token, after, onRefused };
  const sub = opened
    ? subscribeResumable({
        ...common,
        query: ApprovalOpened,
        cursorOf: (d) => d.approvalOpened.eventCursor,
        onEvent: (d) => positions.push(positionOf(d.approvalOpened.eventCursor)),
      })
    : subscribeResumable({
        ...common,
        query: ApprovalChanged,
        cursorOf: (d) => d.approvalChanged.eventCursor,
        onEvent: (d) => positions.push(positionOf(d.approvalChanged.eventCursor)),
      });
  return Object.assign(w, { sub });
}

/** The positions a subscription should have received: approval events after its start it may see. */
async function expectedFor(db: pg.Client, w: Watch): Promise<number[]> {
  const r = await db.query<{ position: string }>(
    `SELECT e.position FROM stream_events e JOIN approvals a ON a.id = e.object_id
      WHERE e.type = 'approval' AND e.position > $1 AND (e.change = 'opened') = $2
        AND (a.candidate_groups && $3::text[]
             OR EXISTS (SELECT 1 FROM jsonb_array_elements(a.levels) l, jsonb_array_elements_text(l) g
                         WHERE g = ANY($3::text[])))
      ORDER BY e.position`,
    [w.start, w.opened, w.groups],
  );
  return r.rows.map((x) => Number(x.position));
}
