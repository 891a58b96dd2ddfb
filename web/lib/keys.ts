'use client';
/** Page-wide keyboard shortcuts that stay out of the way while a person types in a field. */
import { useEffect, useRef } from 'react';

export function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el) return false;
  return el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName);
}

/**
 * Calls `handler` for `key` (e.g. "A" with shift, "j"), never while typing in a field or with Ctrl/Meta/Alt
 * held, so the browser's own shortcuts keep working.
 */
export function useShortcut(key: string, handler: (e: KeyboardEvent) => void, opts: { shift?: boolean; enabled?: boolean } = {}) {
  const ref = useRef(handler);
  ref.current = handler;
  const { shift = false, enabled = true } = opts;
  useEffect(() => {
    if (!enabled) return;
    const on = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || e.shiftKey !== shift || typing(e.target)) return;
      if (e.key.toLowerCase() !== key.toLowerCase()) return;
      e.preventDefault();
      ref.current(e);
    };
    window.addEventListener('keydown', on);
    return () => window.removeEventListener('keydown', on);
  }, [key, shift, enabled]);
}
