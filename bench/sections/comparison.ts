/** What the agent peers' comparison measures, per window: Abada's whole agents and a peer's tasks. */
import type { WindowCounts } from '../pgstat.js';

export interface AgentWindow {
  agents: number;
  /** CPU ms per agent: the engines and the client (as a peer's process; split below), and PostgreSQL */
  cpuMsPerAgent: { process: number; engines: number; client: number; postgres: number; total: number };
  counts: WindowCounts;
}

export interface AgentPeerResult {
  peer: string;
  mode: string;
  tasks: number;
  tasksPerSec: number;
  /** CPU ms per task: the peer's process (library, stubs, pg client) and PostgreSQL */
  cpuMsPerTask: { process: number; postgres: number; total: number };
  commitsPerTask: number;
  /** n_tup_ins over the database's user tables, per task; and by a direct count of their rows */
  rowsPerTask: number;
  rowsCountedPerTask: number;
  walBytesPerTask: number;
  /** what the peer's design implies, printed beside the measured figures */
  expected: { commits: number; rows: number };
}
