import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { printAbadaSchema } from '../../scripts/build-schema.js';

describe('schema.graphql', () => {
  it('matches the Pothos schema (run `npm run schema:build` and commit when this fails)', () => {
    expect(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8')).toBe(printAbadaSchema());
  });

  it('has every operation SPEC §9 fixes', () => {
    const sdl = printAbadaSchema();
    const fixed = {
      Query: [
        'me',
        'definitions',
        'toolServers',
        'processInstance',
        'processInstances',
        'externalTask',
        'approvals',
        'approval',
        'incidents',
        'workers',
        'toolCredential',
        'verifyAudit',
      ],
      Mutation: [
        'createPrincipal',
        'deploy',
        'setCredential',
        'startProcess',
        'cancelProcess',
        'suspendProcess',
        'resumeProcess',
        'registerWorker',
        'fetchAndLock',
        'extendLock',
        'journalStep',
        'completeTask',
        'failTask',
        'decideApproval',
        'resolveIncident',
        'completeUserTask',
        'retryTask',
      ],
      Subscription: ['approvalOpened', 'approvalChanged', 'taskChanged', 'incidentOpened'],
    };
    for (const [type, fields] of Object.entries(fixed)) {
      const block = sdl.slice(sdl.indexOf(`type ${type} {`));
      const body = block.slice(0, block.indexOf('\n}'));
      for (const f of fields) expect(body, `${type}.${f}`).toMatch(new RegExp(`\\n  ${f}[(:]`));
    }
  });
});
