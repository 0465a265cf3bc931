import express from 'express';
import { createLogger } from '@acme/logger';
import { loadConfig } from './config/env';
import { errorHandler } from './middleware/errors';
import { requireSession } from './middleware/auth';
import { productsRouter } from './routes/products';
import { ordersRouter } from './routes/orders';
import { cartRouter } from './routes/cart';

const log = createLogger('api');

export function buildApp() {
  const config = loadConfig();
  const app = express();

  app.disable('x-powered-by');
  app.use(express.json({ limit: '100kb' }));
  app.use('/api/v1/products', productsRouter);
  app.use('/api/v1/cart', requireSession, cartRouter);
  app.use('/api/v1/orders', requireSession, ordersRouter);
  app.get('/healthz', (_req, res) => res.json({ ok: true, env: config.env }));
  app.use(errorHandler);
  return app;
}

if (require.main === module) {
  const config = loadConfig();
  const app = buildApp();
  app.listen(config.port, () => {
    log.info('api started', { port: config.port });
    console.log(`storefront api listening on http://localhost:${config.port}`);
  });
}
