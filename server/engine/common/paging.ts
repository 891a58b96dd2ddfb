/** Keyset pagination of every API list: newest first on (created_at in ms, id), opaque cursor. */
import { type AnyColumn, and, desc, eq, lt, or, sql } from 'drizzle-orm';
import { invalid } from '../../errors.js';
import { isUuid } from './access.js';

export function cursorOrder(createdAt: AnyColumn, id: AnyColumn) {
  return [sql`date_trunc('milliseconds', ${createdAt}) DESC`, desc(id)];
}

export function cursorCondition(createdAt: AnyColumn, id: AnyColumn, after: string | null | undefined) {
  const c = decodeCursor(after);
  if (!c) return undefined;
  const ms = sql`date_trunc('milliseconds', ${createdAt})`;
  return or(lt(ms, c.at), and(eq(ms, c.at), lt(id, c.id)));
}

function encodeCursor(at: Date, id: string): string {
  return Buffer.from(JSON.stringify([at.toISOString(), id])).toString('base64url');
}

function decodeCursor(after: string | null | undefined): { at: Date; id: string } | null {
  if (!after) return null;
  try {
    const [at, id] = JSON.parse(Buffer.from(after, 'base64url').toString('utf8')) as [string, string];
    const d = new Date(at);
    if (Number.isNaN(d.getTime()) || typeof id !== 'string' || !isUuid(id)) throw new Error('bad');
    return { at: d, id };
  } catch {
    throw invalid(
      'The cursor "after" is not one this API returned; start from the first page.',
      'after',
      'invalid cursor',
    );
  }
}

/** The first `first` of `rows` (fetched with one more, to tell if a next page exists) as a connection. */
export function page<T extends { createdAt: Date; id: string }>(
  rows: T[],
  first: number,
  totalCount: number,
) {
  const items = rows.slice(0, first);
  const last = items.at(-1);
  return {
    edges: items.map((node) => ({ node, cursor: encodeCursor(node.createdAt, node.id) })),
    pageInfo: {
      hasNextPage: rows.length > first,
      endCursor: last ? encodeCursor(last.createdAt, last.id) : null,
    },
    totalCount,
  };
}

/** The page size asked for: 1 to 200, 50 when not said. */
export function pageSize(first: number | null | undefined): number {
  if (first != null && (first < 1 || first > 200)) {
    throw invalid('first is from 1 to 200.', 'first', 'out of range');
  }
  return first ?? 50;
}
