import type { Kysely } from 'kysely';

/** The database a migration runs on: DDL is written once for both, and a migration asks where they differ. */
export type Dialect = 'sqlite' | 'postgres';

/** A migration's schema change, given the dialect it runs on (migrations only go up). */
export type Up = (db: Kysely<unknown>, dialect: Dialect) => Promise<void>;
