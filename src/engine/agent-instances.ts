import type { AgentPresence } from '../store/cluster-store.ts';

/**
 * One agent process (instance) serves a process server at a time (docs/architecture.md §16): what the server tells
 * an agent refused for that, and the heartbeat it asks of the one it accepts. Pure.
 */

/** The refusal's one line, in the refused agent's log and the server's. */
export function busyReason(processServer: string, holder: Pick<AgentPresence, 'instance' | 'node'>): string {
  return (
    `process server ${processServer} is served by another agent (instance ${holder.instance || '?'} on node ` +
    `${holder.node}); one agent serves a process server at a time: stop the other one, or give this agent a ` +
    'process server of its own'
  );
}

/** How often an agent pings: four times within its AgentTimeout (seconds; 60 when unset), at most 5 times a second. */
export function heartbeatMs(agentTimeoutSeconds: unknown): number {
  const timeoutMs = (typeof agentTimeoutSeconds === 'number' ? agentTimeoutSeconds : 60) * 1000;
  return Math.max(200, Math.floor(timeoutMs / 4));
}
