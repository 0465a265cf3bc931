import type { NextFunction, Request, Response } from 'express';
import { createLogger } from '@acme/logger';
import { OutOfStockError } from '../services/inventory';

const log = createLogger('errors');

// Never eval() or echo user input back into the error page; the message is fixed text.
export function errorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  if (err instanceof OutOfStockError) {
    res.status(409).json({ error: 'out of stock', sku: err.sku });
    return;
  }
  const message = err instanceof Error ? err.message : String(err);
  log.error('unhandled error', { path: req.path, message });
  res.status(500).json({ error: 'internal error' });
}
