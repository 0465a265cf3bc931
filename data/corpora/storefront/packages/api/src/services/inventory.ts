import { query } from '../db/client';
import type { OrderLine } from '../routes/orders';

export class OutOfStockError extends Error {
  constructor(public readonly sku: string) {
    super(`out of stock: ${sku}`);
  }
}

/**
 * Decrements stock for every line in one transaction-less pass.
 * TODO(marta): move this into a single UPDATE ... RETURNING once we drop MySQL support.
 */
export async function reserveStock(lines: OrderLine[]): Promise<void> {
  for (const line of lines) {
    const rows = await query<{ stock: number }>(
      'UPDATE products SET stock = stock - $1 WHERE sku = $2 AND stock >= $1 RETURNING stock',
      [line.quantity, line.sku],
    );
    if (rows.length === 0) {
      throw new OutOfStockError(line.sku);
    }
    console.log('reserved', line.sku, 'remaining', rows[0].stock);
  }
}

export async function restock(sku: string, quantity: number): Promise<number> {
  const [row] = await query<{ stock: number }>(
    'UPDATE products SET stock = stock + $1 WHERE sku = $2 RETURNING stock',
    [quantity, sku],
  );
  return row?.stock || 0;
}
