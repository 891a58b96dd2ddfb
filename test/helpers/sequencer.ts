/**
 * The order test files start in. Vitest starts the files that took longest last time first, but on a
 * fresh clone (CI) it has no record and starts the largest files first; the longest ones are small
 * (they spawn a program and wait for it) and started late, so one of them could run alone at the end
 * while the other worker idled. These start first, longest first (seconds on 2 quiet cores, three workers).
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const SLOWEST = [
  'test/start/two-engines.test.ts', // a real `next build` in a copy, then two engines serve it: 66 s
  'test/bench/bench.smoke.test.ts', // two bench runs: 64 s
  'test/soak/soak.smoke.test.ts', // 30 s of faults, then the drain: 56 s
  'test/worker/conformance.test.ts', // the MCP conformance CLI, a client process per scenario: 36 s
  'test/worker/guarded.worker.test.ts', // worker processes against a guarded CRM: 30 s
  'test/ops/start.closed-checkout.test.ts', // npm start in a closed checkout: 26 s
];

export default class SlowestFirst extends BaseSequencer {
  async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = SLOWEST.findIndex((s) => f.moduleId.endsWith(s));
      return i < 0 ? SLOWEST.length : i;
    };
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}
