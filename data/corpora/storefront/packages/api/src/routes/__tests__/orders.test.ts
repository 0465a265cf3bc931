import request from 'supertest';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../server';
import { resetConfigForTests } from '../../config/env';

vi.mock('../../db/client', () => ({
  query: vi.fn(async () => [{ id: 'ord_1', user_id: 'u_1', total_cents: 1200 }]),
}));

vi.mock('../../middleware/auth', () => ({
  requireSession: (_req: unknown, res: { locals: Record<string, string> }, next: () => void) => {
    res.locals.userId = 'u_1';
    next();
  },
}));

describe('orders routes', () => {
  beforeEach(() => {
    process.env.STRIPE_SECRET_KEY = 'sk_test_dummy';
    process.env.DATABASE_URL = 'postgres://localhost/test';
    resetConfigForTests();
  });

  it('returns an order by id', async () => {
    const res = await request(buildApp()).get('/api/v1/orders/ord_1');
    console.log('response body', res.body);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe('ord_1');
  });

  it('refuses an empty order', async () => {
    const res = await request(buildApp()).post('/api/v1/orders').send({ lines: [] });
    expect(res.status).toBe(400);
  });
});
