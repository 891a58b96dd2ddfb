import { describe, expect, it } from 'vitest';
import { fitForJournal, MAX_RESULT_CHARS } from '../../server/worker/toolsteps.js';

describe('tool answers too large for the journal', () => {
  it('are cut below the engine payload limit, with a marker, and small ones pass untouched', () => {
    const small = { ticketId: 'T-981' };
    expect(fitForJournal(small)).toBe(small);
    const big = { rows: 'x'.repeat(400 * 1024) };
    const cut = fitForJournal(big) as { truncated: boolean; originalChars: number; text: string };
    expect(cut.truncated).toBe(true);
    expect(cut.originalChars).toBe(JSON.stringify(big).length);
    expect(JSON.stringify(cut).length).toBeLessThan(256 * 1024);
    expect(cut.text.length).toBeLessThanOrEqual(MAX_RESULT_CHARS + 100);
    expect(cut.text).toMatch(/\[truncated: the tool answered \d+ characters\]$/);
  });
});
