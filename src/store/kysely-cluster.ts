import { type Kysely, sql } from 'kysely';
import { type AgentPresence, type ClusterNode, type ClusterStore, LeaseLost } from './cluster-store.ts';
import type { Database } from './tables.ts';

/** The ClusterStore of one Kysely database or transaction; the same SQL on SQLite (3.35+) and PostgreSQL. */
export class KyselyClusterStore implements ClusterStore {
  private readonly db: Kysely<Database>;
  private readonly dialect: 'sqlite' | 'postgres';

  constructor(db: Kysely<Database>, dialect: 'sqlite' | 'postgres') {
    this.db = db;
    this.dialect = dialect;
  }

  async beat(n: ClusterNode): Promise<void> {
    await this.db
      .insertInto('cluster_nodes')
      .values({ id: n.id, version: n.version, started_at: n.startedAt, seen_at: n.seenAt, address: n.address })
      .onConflict((c) =>
        c
          .column('id')
          .doUpdateSet({ version: n.version, started_at: n.startedAt, seen_at: n.seenAt, address: n.address }),
      )
      .execute();
  }

  async nodes(): Promise<ClusterNode[]> {
    const rows = await this.db.selectFrom('cluster_nodes').selectAll().orderBy('id').execute();
    return rows.map((r) => ({
      id: r.id,
      version: r.version,
      startedAt: Number(r.started_at),
      seenAt: Number(r.seen_at),
      address: r.address,
    }));
  }

  async removeNode(id: string): Promise<void> {
    await this.db.deleteFrom('cluster_nodes').where('id', '=', id).execute();
  }

  async takeLease(name: string, holder: string, now: number, until: number): Promise<number | undefined> {
    // One statement, so two nodes racing for a free or expired lease cannot both win: the row's unique key
    // serialises them, and the loser's update finds the winner's unexpired row and changes nothing.
    const { rows } = await sql<{ token: number | string }>`
      insert into cluster_leases (name, holder, token, expires_at) values (${name}, ${holder}, 1, ${until})
      on conflict (name) do update set
        token = case when cluster_leases.holder = excluded.holder then cluster_leases.token
                     else cluster_leases.token + 1 end,
        holder = excluded.holder,
        expires_at = excluded.expires_at
      where cluster_leases.holder = excluded.holder or cluster_leases.expires_at < ${now}
      returning token`.execute(this.db);
    return rows[0] === undefined ? undefined : Number(rows[0].token);
  }

  async fence(name: string, holder: string, token: number, now: number): Promise<void> {
    const lock = this.dialect === 'postgres' ? sql` for share` : sql``;
    const { rows } = await sql<{ token: number }>`
      select token from cluster_leases
      where name = ${name} and holder = ${holder} and token = ${token} and expires_at > ${now}${lock}`.execute(this.db);
    if (rows.length === 0) throw new LeaseLost(name);
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await this.db
      .updateTable('cluster_leases')
      .set({ expires_at: 0 })
      .where('name', '=', name)
      .where('holder', '=', holder)
      .execute();
  }

  async putAgents(node: string, agents: readonly AgentPresence[]): Promise<void> {
    if (agents.length === 0) return;
    await this.db
      .insertInto('agent_presence')
      .values(
        agents.map((a) => ({
          process_server: a.processServer,
          node_id: node,
          seen_at: a.seenAt,
          ready: a.ready ? 1 : 0,
          instance: a.instance ?? '',
        })),
      )
      .onConflict((c) =>
        c
          .column('process_server')
          .doUpdateSet((eb) => ({
            node_id: eb.ref('excluded.node_id'),
            seen_at: eb.ref('excluded.seen_at'),
            ready: eb.ref('excluded.ready'),
            instance: eb.ref('excluded.instance'),
          }))
          .where((eb) =>
            // A node refreshes only what it holds: never another instance's claim (claimAgent) on another node.
            eb.or([
              eb('agent_presence.instance', '=', eb.ref('excluded.instance')),
              eb('agent_presence.node_id', '=', eb.ref('excluded.node_id')),
            ]),
          ),
      )
      .execute();
  }

  async claimAgent(a: AgentPresence, aliveAfter: number): Promise<AgentPresence | undefined> {
    const { rows } = await sql<{ process_server: string }>`
      insert into agent_presence (process_server, node_id, seen_at, ready, instance)
      values (${a.processServer}, ${a.node}, ${a.seenAt}, ${a.ready ? 1 : 0}, ${a.instance ?? ''})
      on conflict (process_server) do update set
        node_id = excluded.node_id, seen_at = excluded.seen_at, ready = excluded.ready, instance = excluded.instance
      where agent_presence.instance = excluded.instance or agent_presence.node_id = excluded.node_id
        or not exists (select 1 from cluster_nodes n where n.id = agent_presence.node_id and n.seen_at > ${aliveAfter})
      returning process_server`.execute(this.db);
    if (rows.length > 0) return undefined;
    return (await this.agents()).find((r) => r.processServer === a.processServer);
  }

  async dropAgent(processServer: string, node: string): Promise<void> {
    await this.db
      .deleteFrom('agent_presence')
      .where('process_server', '=', processServer)
      .where('node_id', '=', node)
      .execute();
  }

  async agents(): Promise<AgentPresence[]> {
    const rows = await this.db.selectFrom('agent_presence').selectAll().execute();
    return rows.map((r) => ({
      processServer: r.process_server,
      node: r.node_id,
      seenAt: Number(r.seen_at),
      ready: Number(r.ready) === 1,
      instance: r.instance,
    }));
  }
}
