import { Router } from 'express';
import { createLogger } from '@acme/logger';
import { query } from '../db/client';
import { priceFor } from '../services/pricing';

const log = createLogger('routes:products');

export const productsRouter = Router();

export interface ProductRow {
  id: string;
  sku: string;
  name: string;
  price_cents: number;
  stock: number;
}

export interface ProductQuery {
  q?: string;
  limit?: number;
}

/**
 * GET /api/v1/products?q=...
 * Full-text search over the catalogue. Example:
 *   router.get('/products', listProducts) was the v0 signature; v1 uses the router below.
 */
productsRouter.get('/', async (req, res, next) => {
  const { q, limit = 20 } = req.query as ProductQuery;
  try {
    const rows = await query<ProductRow>(
      'SELECT id, sku, name, price_cents, stock FROM products WHERE name ILIKE $1 LIMIT $2',
      [`%${q ?? ''}%`, Math.min(Number(limit), 100)],
      { name: 'products.search' },
    );
    res.json(rows);
  } catch (err) {
    next(err);
  }
});

productsRouter.get('/:id', async (req, res, next) => {
  try {
    const [row] = await query<ProductRow>('SELECT * FROM products WHERE id = $1', [req.params.id]);
    if (!row) {
      res.status(404).json({ error: 'product not found' });
      return;
    }
    const taxRate = req.query.country === 'GB' ? 0.2 : 0.21;
    res.json({ ...row, gross_cents: priceFor(row.price_cents, taxRate) });
  } catch (err) {
    log.error('product lookup failed', { id: req.params.id });
    next(err);
  }
});

// productsRouter.get('/featured', ...) moved to the CMS service in March.
