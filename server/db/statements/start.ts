/** The start's statements (SPEC §5), named so that each is parsed and planned once per connection. */
import { statement } from '../pg.js';
import type { ProcessInstanceRow } from '../schema.js';
import { INSTANCE_COLUMNS } from './tasks.js';

/** $1 project, $2 process key: the id of its latest version, if any. */
export const LATEST_DEFINITION = statement<{ id: string }>(
  'definition_latest',
  `SELECT id FROM definitions WHERE project_id = $1 AND key = $2 ORDER BY version DESC LIMIT 1`,
);

/**
 * $1 id, $2 project, $3 definition id, $4 key, $5 version, $6 start node, $7 variables, $8 business key,
 * $9 started by, $10–$12 the delegating parent's task, sequence and attempt, $13 depth, $14 traceparent:
 * the instance ACTIVE at its start node, its row in its drizzle shape.
 */
export const INSERT_INSTANCE = statement<ProcessInstanceRow>(
  'instance_insert',
  `INSERT INTO process_instances AS i (id, project_id, definition_id, key, version, state, current_node_id,
     variables, business_key, started_by, parent_task_id, parent_sequence, parent_attempt, depth, traceparent)
   VALUES ($1, $2, $3, $4, $5, 'ACTIVE', $6, $7::jsonb, $8, $9, $10, $11, $12, $13, $14)
   RETURNING ${INSTANCE_COLUMNS}`,
);

/**
 * $1 id, $2 project, $3 instance, $4 node, $5 node type, $6 topic, $7 priority, $8 max attempts, $9 the
 * agent's work (null for a service task), $10 its timeout in seconds (null: none): the task OPEN on its
 * first attempt, its timeout boundary by the database clock (SPEC §15.4).
 */
export const INSERT_TASK = statement<never>(
  'task_insert',
  `INSERT INTO external_tasks (id, project_id, process_instance_id, node_id, node_type, topic_name, state,
     priority, max_attempts, agent_work, boundary_at)
   VALUES ($1, $2, $3, $4, $5, $6, 'OPEN', $7, $8, $9::jsonb,
     now() + make_interval(secs => $10::double precision))`,
);
