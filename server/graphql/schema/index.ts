import './principal.js';
import './definition.js';
import './step.js';
import './journal-batch.js';
import './task.js';
import './instance.js';
import './approval.js';
import './incident.js';
import './worker.js';
import './price.js';
import './idempotency.js';
import './webhook.js';
import './stats.js';
import './stream.js';
import { lexicographicSortSchema } from 'graphql';
import { builder } from '../builder.js';

export const schema = lexicographicSortSchema(builder.toSchema());
