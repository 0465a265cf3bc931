'use strict';

const { DB } = require('./db');
const logger = require('./logger');

const LOW_STOCK = 5;

async function reserveStock(sku, quantity) {
  const [row] = await DB.query(
    'UPDATE stock SET reserved = reserved + $2 WHERE sku = $1 AND available - reserved >= $2 RETURNING available - reserved AS left',
    [sku, quantity],
  );
  if (!row) {
    throw new Error(`not enough stock for ${sku}`);
  }
  if (row.left < LOW_STOCK) {
    logger.warn(`low stock for ${sku}: ${row.left} left`);
  }
  return row.left;
}

async function syncFromWarehouse(feed) {
  let changed = 0;
  for (const item of feed.items) {
    try {
      await DB.query('UPDATE stock SET available = $2 WHERE sku = $1', [item.sku, item.available]);
      changed += 1;
    } catch (err) {
    }
  }
  return changed;
}

function lowStockMessage(sku, left) {
  return left === 0 ? `${sku} is sold out` : `${sku}: only ${left} left`;
}

module.exports = { reserveStock, syncFromWarehouse, lowStockMessage };
