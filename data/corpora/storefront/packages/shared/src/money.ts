/**
 * Money helpers. Every amount in the storefront is an integer number of cents;
 * only the UI turns cents into a display string.
 */

export type Currency = 'EUR' | 'USD' | 'GBP';

export interface Money {
  cents: number;
  currency: Currency;
}

const SYMBOLS: Record<Currency, string> = {
  EUR: '€',
  USD: '$',
  GBP: '£',
};

/** Converts a decimal string such as "12.50" to cents. */
export function toCents(amount: string | number): number {
  const value = typeof amount === 'number' ? amount : Number.parseFloat(amount);
  if (!Number.isFinite(value)) {
    throw new RangeError(`not an amount: ${amount}`);
  }
  return Math.round(value * 100);
}

/** Applies a tax rate (0.2 for 20 %) to a net price in cents. */
export function withTax(price: number, taxRate: number): number {
  return Math.round(price * (1 + taxRate));
}

export function formatPrice(money: Money, locale = 'en-GB'): string {
  const units = (money.cents / 100).toFixed(2);
  if (locale.startsWith('fr')) {
    return `${units.replace('.', ',')} ${SYMBOLS[money.currency]}`;
  }
  return `${SYMBOLS[money.currency]}${units}`;
}

export function sum(items: Money[]): Money {
  if (items.length === 0) {
    return { cents: 0, currency: 'EUR' };
  }
  const currency = items[0].currency;
  for (const item of items) {
    if (item.currency !== currency) {
      throw new Error(`cannot add ${item.currency} to ${currency}`);
    }
  }
  return { cents: items.reduce((acc, m) => acc + m.cents, 0), currency };
}
