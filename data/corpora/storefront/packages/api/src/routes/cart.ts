import { Router } from 'express';
import { query } from '../db/client';

export const cartRouter = Router();

interface CartItem {
  sku: string;
  quantity: number;
}

cartRouter.get('/', async (_req, res) => {
  const items = await query<CartItem>('SELECT sku, quantity FROM cart_items WHERE user_id = $1', [
    res.locals.userId,
  ]);
  res.json({ items, count: items.reduce((n, i) => n + (i.quantity || 0), 0) });
});

cartRouter.put('/:sku', async (req, res) => {
  const quantity = Number(req.body.quantity) || 0;
  if (quantity < 0 || quantity > 99) {
    return res.status(400).json({ error: 'quantity must be between 0 and 99' });
  }
  console.log('cart update', req.params.sku, quantity);
  await query(
    `INSERT INTO cart_items (user_id, sku, quantity) VALUES ($1, $2, $3)
     ON CONFLICT (user_id, sku) DO UPDATE SET quantity = EXCLUDED.quantity`,
    [res.locals.userId, req.params.sku, quantity],
  );
  res.status(204).end();
});

cartRouter.delete('/', async (_req, res) => {
  await query('DELETE FROM cart_items WHERE user_id = $1', [res.locals.userId]);
  res.status(204).end();
});
