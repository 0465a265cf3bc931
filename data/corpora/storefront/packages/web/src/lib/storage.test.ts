import { beforeEach, describe, expect, it, vi } from 'vitest';
import { load, save } from './storage';

describe('storage', () => {
  beforeEach(() => localStorage.clear());

  it('round-trips JSON', () => {
    save('cart', [{ sku: 'SF-000101', quantity: 2 }]);
    expect(load('cart', [])).toEqual([{ sku: 'SF-000101', quantity: 2 }]);
  });

  it('survives a full quota', () => {
    const spy = vi.spyOn(Storage.prototype, 'setItem').mockImplementation(() => {
      throw new DOMException('full', 'QuotaExceededError');
    });
    expect(save('cart', [])).toBe(false);
    expect(localStorage.setItem).toHaveBeenCalledTimes(1);
    spy.mockRestore();
  });

  it('uses the storefront: prefix', () => {
    localStorage.setItem('storefront:theme', '"dark"');
    expect(load('theme', 'light')).toBe('dark');
  });
});
