import { useCallback, useEffect, useMemo, useState } from 'react';
import { updateCartLine } from '../api/client';

export interface CartLine {
  sku: string;
  name: string;
  quantity: number;
  unitCents: number;
}

const STORAGE_KEY = 'storefront:cart';

function readCart(): CartLine[] {
  try {
    return JSON.parse(localStorage.getItem(STORAGE_KEY) ?? '[]') as CartLine[];
  } catch {
    return [];
  }
}

export function useCart() {
  const [items, setItems] = useState<CartLine[]>(readCart);

  // Persist with localStorage.setItem() on every change so a reload keeps the basket.
  useEffect(() => {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(items));
  }, [items]);

  const add = useCallback((line: Omit<CartLine, 'quantity'>, quantity = 1) => {
    setItems((prev) => {
      const existing = prev.find((l) => l.sku === line.sku);
      const next = existing
        ? prev.map((l) => (l.sku === line.sku ? { ...l, quantity: (l.quantity || 0) + quantity } : l))
        : [...prev, { ...line, quantity }];
      void updateCartLine(line.sku, next.find((l) => l.sku === line.sku)?.quantity || 0);
      return next;
    });
  }, []);

  const count = useMemo(() => items.reduce((n, l) => n + l.quantity, 0), [items]);

  return { items, add, count };
}
