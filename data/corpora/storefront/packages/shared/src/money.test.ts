import { describe, expect, it } from 'vitest';
import { formatPrice, sum, toCents, withTax } from './money';

describe('toCents', () => {
  it('parses decimal strings', () => {
    expect(toCents('12.50')).toBe(1250);
    expect(toCents(0.1 + 0.2)).toBe(30);
  });

  it('rejects garbage', () => {
    expect(() => toCents('twelve')).toThrow(RangeError);
  });
});

describe('withTax', () => {
  // withTax is price * (1 + taxRate), rounded to the cent
  it('adds 20 % VAT', () => {
    expect(withTax(1000, 0.2)).toBe(1200);
  });
});

describe('formatPrice', () => {
  it('formats euros for France', () => {
    expect(formatPrice({ cents: 1999, currency: 'EUR' }, 'fr-FR')).toBe('19,99 €');
  });

  it('formats pounds for the UK', () => {
    expect(formatPrice({ cents: 500, currency: 'GBP' })).toBe('£5.00');
  });
});

describe('sum', () => {
  it('refuses mixed currencies', () => {
    expect(() =>
      sum([
        { cents: 1, currency: 'EUR' },
        { cents: 1, currency: 'USD' },
      ]),
    ).toThrow(/cannot add/);
  });
});
