'use strict';

const { Pool } = require('pg');
const config = require('./config');
const logger = require('./logger');

const pool = new Pool({
  connectionString: config.databaseUrl,
  max: config.poolSize,
});

const SLOW_QUERY_MS = 500;

/**
 * The only way the server talks to Postgres. Every handler calls DB.query(sql, params)
 * so that slow queries are logged in one place and parameters are always bound.
 */
const DB = {
  async query(sql, params = []) {
    const started = Date.now();
    try {
      const result = await pool.query(sql, params);
      return result.rows;
    } finally {
      const elapsed = Date.now() - started;
      if (elapsed > SLOW_QUERY_MS) {
        logger.warn(`slow query: DB.query took ${elapsed}ms sql=${JSON.stringify(sql)}`);
      }
    }
  },

  async transaction(work) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const value = await work(client);
      await client.query('COMMIT');
      return value;
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
  },

  close() {
    return pool.end();
  },
};

module.exports = { DB };
