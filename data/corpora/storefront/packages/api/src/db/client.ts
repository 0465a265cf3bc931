import { Pool, type QueryResultRow } from 'pg';
import { createLogger } from '@acme/logger';
import { loadConfig } from '../config/env';

const log = createLogger('db');

export interface QueryOptions {
  /** Abort the statement after this many milliseconds. */
  timeoutMs?: number;
  /** A label for the slow-query log. */
  name?: string;
}

let pool: Pool | undefined;

function getPool(): Pool {
  if (!pool) {
    pool = new Pool({ connectionString: loadConfig().databaseUrl, max: 10 });
    pool.on('error', (err) => log.error('idle client error', { err: err.message }));
  }
  return pool;
}

export async function query<T extends QueryResultRow>(
  sql: string,
  params: unknown[] = [],
  options: QueryOptions = {},
): Promise<T[]> {
  const started = Date.now();
  const client = await getPool().connect();
  try {
    if (options.timeoutMs) {
      await client.query(`SET statement_timeout = ${Math.floor(options.timeoutMs)}`);
    }
    const result = await client.query<T>(sql, params);
    return result.rows;
  } finally {
    client.release();
    const elapsed = Date.now() - started;
    if (elapsed > 500) {
      log.warn('slow query', { name: options.name ?? sql.slice(0, 40), elapsed });
    }
  }
}

export async function closePool(): Promise<void> {
  await pool?.end();
  pool = undefined;
}
