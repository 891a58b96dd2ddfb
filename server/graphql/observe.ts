/** Times (the latency histograms of /metrics) and logs the engine commands of each GraphQL mutation. */
import type { Plugin } from 'graphql-yoga';
import type { Logger } from '../log.js';
import type { EngineMetrics } from '../metrics/index.js';
import { codeOf, commandFields, commandIds } from './commands.js';

/** The commands a worker sends all the time: logged at debug when they succeed. */
const ROUTINE_COMMANDS = new Set([
  'fetchAndLock',
  'journalStep',
  'journalSteps',
  'journalBatch',
  'extendLock',
]);

export function observePlugin(metrics: EngineMetrics, log: Logger): Plugin {
  return {
    onExecute({ args }) {
      const fields = commandFields(args);
      if (!fields.length) return;
      const start = performance.now();
      return {
        onExecuteDone({ result }) {
          const seconds = (performance.now() - start) / 1000;
          const errors = 'errors' in result ? (result.errors ?? []) : [];
          for (const f of fields) {
            const err = errors.find((e) => e.path?.[0] === f.key);
            const code = err ? codeOf(err) : null;
            const input = (f.args.input ?? {}) as Record<string, unknown>;
            if (f.name === 'fetchAndLock') {
              const longPoll = Number(input.asyncResponseTimeoutMs ?? 0) > 0 ? 'true' : 'false';
              metrics.fetch.observe(seconds, { long_poll: longPoll, outcome: code ? 'error' : 'ok' });
            } else if (f.name === 'journalStep') {
              metrics.journal.observe(seconds, {
                kind: String(input.kind ?? ''),
                state: String(input.state ?? ''),
                outcome: code ? 'error' : 'ok',
              });
            }
            // a worker's routine commands log at debug: with debug off, no log entry is built for them
            const routine = !code && ROUTINE_COMMANDS.has(f.name);
            if (routine && !log.isLevelEnabled('debug')) continue;
            const entry = {
              command: f.name,
              ...commandIds(f.name, f.args),
              durationMs: Math.round(seconds * 1000),
              ...(code ? { code } : {}),
            };
            if (code === 'INTERNAL') log.error(entry, 'engine command failed');
            else if (code) log.info(entry, 'engine command refused');
            else if (routine) log.debug(entry, 'engine command');
            else log.info(entry, 'engine command');
          }
        },
      };
    },
  };
}
