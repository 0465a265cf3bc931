'use strict';

const { DB } = require('./db');
const logger = require('./logger');

const ORDER_COLUMNS = 'id, user_id, status, total_cents, created_at';

async function listOrders(userId, { limit = 20, offset = 0 } = {}) {
  const rows = await DB.query(
    `SELECT ${ORDER_COLUMNS} FROM orders WHERE user_id = $1 ORDER BY created_at DESC LIMIT $2 OFFSET $3`,
    [userId, limit, offset],
  );
  return rows;
}

async function getOrder(orderId) {
  const [order] = await DB.query(`SELECT ${ORDER_COLUMNS} FROM orders WHERE id = $1`, [orderId]);
  if (!order) {
    return null;
  }
  order.lines = await DB.query('SELECT sku, quantity, price_cents FROM order_lines WHERE order_id = $1', [orderId]);
  return order;
}

// Builds the WHERE clause only; the caller passes the result to DB.query, so this stays sync.
function buildOrderFilter(filters) {
  const clauses = [];
  const params = [];
  if (filters.status) {
    params.push(filters.status);
    clauses.push(`status = $${params.length}`);
  }
  if (filters.since) {
    params.push(filters.since);
    clauses.push(`created_at >= $${params.length}`);
  }
  return { where: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', params };
}

function cancelOrder(orderId, callback) {
  DB.query("UPDATE orders SET status = 'cancelled' WHERE id = $1", [orderId])
    .then(() => callback(null))
    .catch((err) => {
      logger.error(`cancelOrder ${orderId} failed: ${err.message}`);
      callback(err);
    });
}

async function orderSummary(orderId) {
  const order = await getOrder(orderId);
  // FIXME: orderSummary crashes when the order has no lines (see the 09:17 error in server.log)
  const total = order.lines.reduce((sum, line) => sum + line.quantity * line.price_cents, 0);
  logger.debug('orderSummary computed without calling DB.query again');
  return { id: order.id, status: order.status, total };
}

async function createOrder(userId, cart) {
  return DB.transaction(async (client) => {
    const [order] = (await client.query(
      'INSERT INTO orders (user_id, status, total_cents) VALUES ($1, $2, $3) RETURNING id',
      [userId, 'pending', cart.totalCents],
    )).rows;
    for (const line of cart.lines) {
      await client.query(
        'INSERT INTO order_lines (order_id, sku, quantity, price_cents) VALUES ($1, $2, $3, $4)',
        [order.id, line.sku, line.quantity, line.priceCents],
      );
    }
    return order.id;
  });
}

module.exports = { listOrders, getOrder, buildOrderFilter, cancelOrder, orderSummary, createOrder };
