import { Router } from 'express';
import { createLogger } from '@acme/logger';
import { CHECKOUT_V2, isEnabled } from '@storefront/shared';
import { query } from '../db/client';
import { loadConfig } from '../config/env';
import { chargeOrder } from '../services/payments';
import { reserveStock } from '../services/inventory';

const log = createLogger('routes:orders');

export const ordersRouter = Router();

export interface OrderLine {
  sku: string;
  quantity: number;
  unitCents: number;
}

ordersRouter.get('/:id', async (req, res, next) => {
  try {
    const [order] = await query('SELECT * FROM orders WHERE id = $1 AND user_id = $2', [
      req.params.id,
      res.locals.userId,
    ]);
    if (!order) return res.status(404).json({ error: 'order not found' });
    res.json(order);
  } catch (err) {
    next(err);
  }
});

ordersRouter.post('/', async (req, res, next) => {
  const lines: OrderLine[] = req.body.lines ?? [];
  if (lines.length === 0) {
    return res.status(400).json({ error: 'an order needs at least one line' });
  }
  try {
    await reserveStock(lines);
    const total = lines.reduce((acc, l) => acc + l.unitCents * l.quantity, 0);
    const useV2 = isEnabled(loadConfig().featureFlags, CHECKOUT_V2);
    const charge = await chargeOrder({ userId: res.locals.userId, totalCents: total, v2: useV2 });
    log.info('order placed', { total, charge: charge.id, checkout: useV2 ? 'v2' : 'v1' });
    res.status(201).json({ id: charge.orderId, total });
  } catch (err) {
    next(err);
  }
});
