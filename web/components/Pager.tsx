'use client';
/** Cursor paging: a stack of cursors so "Previous" returns to the exact page before. */
import { useCallback, useState } from 'react';

export function useCursor() {
  const [stack, setStack] = useState<(string | null)[]>([null]);
  const after = stack[stack.length - 1];
  const next = useCallback((cursor: string | null | undefined) => {
    if (cursor) setStack((s) => [...s, cursor]);
  }, []);
  const prev = useCallback(() => setStack((s) => (s.length > 1 ? s.slice(0, -1) : s)), []);
  const reset = useCallback(() => setStack([null]), []);
  return { after, page: stack.length, next, prev, reset };
}

export function Pager(props: {
  page: number;
  hasNext: boolean;
  total: number;
  onPrev(): void;
  onNext(): void;
}) {
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" onClick={props.onPrev} disabled={props.page <= 1}>
        ← Previous
      </button>
      <span className="muted">
        Page {props.page} · {props.total} in all
      </span>
      <button type="button" onClick={props.onNext} disabled={!props.hasNext}>
        Next →
      </button>
    </nav>
  );
}
