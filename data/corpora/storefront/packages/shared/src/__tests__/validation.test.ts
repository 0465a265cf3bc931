import { describe, expect, it } from 'vitest';
import { isValidEmail, isValidSku, normalizeSku, validateAddress } from '../validation';

describe('normalizeSku', () => {
  it('pads the numeric part to six digits', () => {
    expect(normalizeSku('sf', 123)).toBe('SF-000123');
  });
});

describe('isValidSku', () => {
  it.each([
    ['SF-000123', true],
    ['sf-000123', false],
    ['SF-123', false],
  ])('%s -> %s', (sku, ok) => {
    expect(isValidSku(sku)).toBe(ok);
  });
});

describe('isValidEmail', () => {
  it('trims before checking', () => {
    expect(isValidEmail('  ada@example.com ')).toBe(true);
  });
});

describe('validateAddress', () => {
  it('checks French postcodes', () => {
    const errors = validateAddress({ line1: '1 rue de la Paix', city: 'Paris', postcode: '750', country: 'FR' });
    expect(errors).toEqual([{ field: 'postcode', message: 'French postcodes have five digits' }]);
  });
});
