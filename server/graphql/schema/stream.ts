/** The event stream's own query field (SPEC §13): where it stands, for a subscriber that reloads state. */
import { cursorOf, streamHead } from '../../engine/events/index.js';
import { builder } from '../builder.js';

builder.queryField('eventCursor', (t) =>
  t.string({
    description:
      'The latest position of the approval and incident event stream. Take it before loading the approvals or incidents you track, then subscribe with after: it, and nothing committed in between is missed.',
    resolve: async (_r, _a, ctx) => cursorOf(await streamHead(ctx.engine.db)),
  }),
);
