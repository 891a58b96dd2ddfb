'use client';
/** The inbox's filters (process, tool, risk, age) over the loaded rows, and the browser-notification switch. */
import { type ReactElement, useEffect, useState } from 'react';

export interface RowFilter {
  process: string;
  tool: string;
  risk: string;
  /** only approvals opened within this many hours; 0 = any age */
  maxAgeHours: number;
}
export const NO_FILTER: RowFilter = { process: '', tool: '', risk: '', maxAgeHours: 0 };

export function matches(
  f: RowFilter,
  a: { processKey: string; toolRef: string; risk: string; createdAt: string },
  now: number,
): boolean {
  if (f.process && a.processKey !== f.process) return false;
  if (f.tool && a.toolRef !== f.tool) return false;
  if (f.risk && a.risk !== f.risk) return false;
  if (f.maxAgeHours && now - new Date(a.createdAt).getTime() > f.maxAgeHours * 3_600_000) return false;
  return true;
}

export function Filters({
  value,
  onChange,
  processes,
  tools,
}: {
  value: RowFilter;
  onChange(f: RowFilter): void;
  processes: string[];
  tools: string[];
}) {
  const set = (patch: Partial<RowFilter>) => onChange({ ...value, ...patch });
  return (
    <>
      <label>
        Process{' '}
        <select value={value.process} onChange={(e) => set({ process: e.target.value })}>
          <option value="">any</option>
          {processes.map((p) => (
            <option key={p}>{p}</option>
          ))}
        </select>
      </label>
      <label>
        Tool{' '}
        <select value={value.tool} onChange={(e) => set({ tool: e.target.value })}>
          <option value="">any</option>
          {tools.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      </label>
      <label>
        Risk{' '}
        <select value={value.risk} onChange={(e) => set({ risk: e.target.value })}>
          <option value="">any</option>
          <option value="HIGH">high</option>
          <option value="MEDIUM">medium</option>
          <option value="LOW">low</option>
        </select>
      </label>
      <label>
        Age{' '}
        <select value={value.maxAgeHours} onChange={(e) => set({ maxAgeHours: Number(e.target.value) })}>
          <option value={0}>any</option>
          <option value={1}>last hour</option>
          <option value={24}>last 24 h</option>
          <option value={168}>last 7 days</option>
        </select>
      </label>
    </>
  );
}

/**
 * Browser notifications, asked for only when the person clicks (never on load). Returns whether they are
 * on and the button that turns them on.
 */
export function useNotifications(): { on: boolean; button: ReactElement | null } {
  const [permission, setPermission] = useState<NotificationPermission | 'unsupported'>('default');
  useEffect(() => {
    setPermission(typeof Notification === 'undefined' ? 'unsupported' : Notification.permission);
  }, []);
  if (permission === 'unsupported') return { on: false, button: null };
  if (permission === 'granted') {
    return { on: true, button: <span className="muted small" data-testid="notify-state">Browser notifications on</span> };
  }
  return {
    on: false,
    button: (
      <button
        type="button"
        data-testid="notify-button"
        disabled={permission === 'denied'}
        onClick={async () => setPermission(await Notification.requestPermission())}
      >
        {permission === 'denied' ? 'Notifications blocked in this browser' : 'Notify me of new approvals'}
      </button>
    ),
  };
}
