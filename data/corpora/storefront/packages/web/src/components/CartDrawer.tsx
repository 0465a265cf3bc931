import { useEffect, useRef } from 'react';
import { formatPrice } from '@storefront/shared';
import type { CartLine } from '../hooks/useCart';

interface CartDrawerProps {
  open: boolean;
  items: CartLine[];
  onClose: () => void;
  onCheckout: () => void;
}

// The basket itself is persisted by useCart (localStorage.setItem() on every change),
// so closing the drawer never loses anything.
export function CartDrawer({ open, items, onClose, onCheckout }: CartDrawerProps) {
  const panel = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onClose();
    };
    window.addEventListener('keydown', onKey);
    panel.current?.focus();
    return () => window.removeEventListener('keydown', onKey);
  }, [open, onClose]);

  const total = items.reduce((acc, l) => acc + l.unitCents * l.quantity, 0);

  return (
    <aside className={open ? 'cart-drawer cart-drawer--open' : 'cart-drawer'} aria-hidden={!open}>
      <div ref={panel} tabIndex={-1} className="cart-drawer__panel">
        <h2>Your basket</h2>
        {items.length === 0 ? (
          <p className="cart-drawer__empty">Your basket is empty</p>
        ) : (
          <ul>
            {items.map((line) => (
              <li key={line.sku}>
                {line.name} × {line.quantity}
              </li>
            ))}
          </ul>
        )}
        <p className="cart-drawer__total">{formatPrice({ cents: total, currency: 'EUR' })}</p>
        <button type="button" onClick={onCheckout} disabled={items.length === 0}>
          Go to checkout
        </button>
        <button type="button" className="link" onClick={onClose}>
          Close
        </button>
      </div>
    </aside>
  );
}
