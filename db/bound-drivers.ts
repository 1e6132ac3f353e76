// MikroORM 6 formats every SQL statement client-side: platform.formatQuery() escapes each value and
// splices it into the SQL text, so nothing is ever bound. Escaping is not binding (a NUL byte in a
// value ended the SQL text early: "SQLITE_ERROR: unrecognized token"). These drivers pass values to
// the database as real parameters (sqlite3 and pg bind them); only a statement carrying a raw SQL
// fragment as a value, which cannot be bound, falls back to the ORM's own formatting.
import { JsonProperty, Utils, type Configuration } from '@mikro-orm/core';
import { AbstractSqlDriver, type AbstractSqlConnection, type Knex } from '@mikro-orm/knex';
import { PostgreSqlConnection, PostgreSqlPlatform } from '@mikro-orm/postgresql';
import { SqliteConnection, SqlitePlatform } from '@mikro-orm/sqlite';
import { Database, OPEN_READWRITE, type Statement } from 'sqlite3';

const UNBINDABLE = Symbol('unbindable');

/** The parameter as the database should receive it, with the ORM's own conversions; UNBINDABLE for a raw fragment. */
function toBinding(value: unknown, datesAsMilliseconds: boolean): unknown {
  if (value === undefined || value === null) return null;
  if (value instanceof Date) return datesAsMilliseconds ? value.getTime() : value;
  if (Buffer.isBuffer(value) || ['string', 'number', 'boolean', 'bigint'].includes(typeof value)) return value;
  if (Utils.isRawSql(value) || (typeof value === 'object' && value !== null && 'toSQL' in value)) return UNBINDABLE;
  if (Array.isArray(value)) {
    const items = value.map((v) => toBinding(v, datesAsMilliseconds));
    return items.includes(UNBINDABLE) ? UNBINDABLE : items;
  }
  if (Utils.isPlainObject(value) || (value as Record<symbol, unknown>)[JsonProperty]) return JSON.stringify(value);
  return UNBINDABLE;
}

type ExecuteArgs = Parameters<AbstractSqlConnection['execute']>;

/** execute() with real bindings; `self` is the connection, `fallback` the ORM's formatting execute. */
async function executeBound(
  self: AbstractSqlConnection & { ensureConnectionPublic(): Promise<void>; executeQueryPublic<T>(sql: string, cb: () => Promise<T>, context: object): Promise<T>; transformRawResultPublic<T>(res: unknown, method: string): T },
  datesAsMilliseconds: boolean,
  fallback: (...args: ExecuteArgs) => Promise<unknown>,
  ...[queryOrKnex, params = [], method = 'all', ctx, loggerContext]: ExecuteArgs
): Promise<unknown> {
  let sql: string;
  let values: unknown[] = params;
  if (typeof queryOrKnex === 'string') {
    sql = queryOrKnex;
  } else {
    const builder = queryOrKnex as Knex.QueryBuilder | Knex.Raw;
    ctx ??= (builder as unknown as { client: { transacting?: boolean } }).client.transacting ? (builder as never) : undefined;
    const compiled = builder.toSQL();
    sql = compiled.sql;
    values = [...(compiled.bindings ?? [])];
  }
  const bindings = values.map((v) => toBinding(v, datesAsMilliseconds));
  if (bindings.length === 0 || bindings.includes(UNBINDABLE)) return fallback(sql, values, method, ctx, loggerContext);
  await self.ensureConnectionPublic();
  return self.executeQueryPublic(
    sql,
    async () => {
      const query = self.getKnex().raw(sql, bindings as Knex.RawBinding[]);
      if (ctx) void query.transacting(ctx as Knex.Transaction);
      return self.transformRawResultPublic(await query, method);
    },
    { query: sql, params: values, ...loggerContext },
  );
}

type ConnectionClass = abstract new (...args: any[]) => AbstractSqlConnection;

/** The dialect's connection with execute() binding its values; SQLite stores dates as milliseconds. */
function bindingConnection<C extends ConnectionClass>(Base: C, datesAsMilliseconds: boolean) {
  abstract class Bound extends Base {
    override execute(...args: ExecuteArgs): Promise<never> {
      return executeBound(this as never, datesAsMilliseconds, (...a) => super.execute(...a), ...args) as Promise<never>;
    }
    ensureConnectionPublic() {
      return this.ensureConnection();
    }
    executeQueryPublic<T>(sql: string, cb: () => Promise<T>, context: object) {
      return this.executeQuery(sql, cb, context as never);
    }
    transformRawResultPublic<T>(res: unknown, method: string): T {
      return this.transformRawResult(res, method as never);
    }
    /** The rows of a read-only statement outside any transaction (see the SQLite connection's). */
    readRows(sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
      return this.execute(sql, params, 'all') as Promise<Record<string, unknown>[]>;
    }
  }
  return Bound;
}

/**
 * A second SQLite connection that only reads (query_only), with its statements prepared once. The
 * ORM's one connection serialises every statement of the process, so a hot read there waits behind
 * each write and transaction of the API and the control worker; under WAL this one reads the last
 * committed state beside them. It never writes: a write here could make a deferred transaction on
 * the ORM's connection fail with SQLITE_BUSY_SNAPSHOT (see ormOptions).
 */
class SqliteReader {
  private readonly statements = new Map<string, Promise<Statement>>();
  private constructor(private readonly db: Database) {}

  static open(file: string): Promise<SqliteReader> {
    return new Promise((resolve, reject) => {
      const db = new Database(file, OPEN_READWRITE, (err) => {
        if (err) return reject(err);
        db.exec('PRAGMA query_only = 1; PRAGMA busy_timeout = 10000', (e) => (e ? reject(e) : resolve(new SqliteReader(db))));
      });
    });
  }

  async all(sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
    const stmt = await this.prepared(sql);
    return new Promise((resolve, reject) => stmt.all(params, (err: Error | null, rows: Record<string, unknown>[]) => (err ? reject(err) : resolve(rows))));
  }

  async close(): Promise<void> {
    for (const stmt of this.statements.values()) await stmt.then((s) => s.finalize()).catch(() => undefined);
    return new Promise((resolve, reject) => this.db.close((err) => (err ? reject(err) : resolve())));
  }

  /** The statement prepared once per SQL text; one that failed to prepare is not kept. */
  private prepared(sql: string): Promise<Statement> {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = new Promise((resolve, reject) => {
        const s = this.db.prepare(sql, (err) => (err ? reject(err) : resolve(s)));
      });
      this.statements.set(sql, stmt);
      stmt.catch(() => this.statements.delete(sql));
    }
    return stmt;
  }
}

class BoundSqliteConnection extends bindingConnection(SqliteConnection, true) {
  private reader?: Promise<SqliteReader>;

  override async readRows(sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
    const file = this.config.get('dbName');
    if (!file || file === ':memory:') return super.readRows(sql, params);
    this.reader ??= SqliteReader.open(file).catch((err: unknown) => {
      this.reader = undefined;
      throw err;
    });
    const bindings = params.map((v) => toBinding(v, true));
    return (await this.reader).all(sql, bindings);
  }

  override async close(force?: boolean): Promise<void> {
    const reader = this.reader;
    this.reader = undefined;
    await reader?.then((r) => r.close()).catch(() => undefined);
    await super.close(force);
  }
}
class BoundPostgreSqlConnection extends bindingConnection(PostgreSqlConnection, false) {}

/** SQLite through sqlite3, every value bound. */
export class BoundSqliteDriver extends AbstractSqlDriver<BoundSqliteConnection, SqlitePlatform> {
  constructor(config: Configuration) {
    super(config, new SqlitePlatform(), BoundSqliteConnection, ['knex', 'sqlite3']);
  }
}

/** PostgreSQL through pg, every value bound. */
export class BoundPostgreSqlDriver extends AbstractSqlDriver<BoundPostgreSqlConnection, PostgreSqlPlatform> {
  constructor(config: Configuration) {
    super(config, new PostgreSqlPlatform(), BoundPostgreSqlConnection, ['knex', 'pg']);
  }
}

/**
 * The rows of a read-only statement, outside the EntityManager's transaction: on SQLite from a
 * reading connection of its own, on PostgreSQL from the pool.
 */
export function readRows(em: { getConnection(): unknown }, sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
  return (em.getConnection() as BoundSqliteConnection | BoundPostgreSqlConnection).readRows(sql, params);
}

/** True on PostgreSQL, where transactions run side by side on the pool; false on SQLite's one connection. */
export function onPostgres(em: { getPlatform(): unknown }): boolean {
  return em.getPlatform() instanceof PostgreSqlPlatform;
}
