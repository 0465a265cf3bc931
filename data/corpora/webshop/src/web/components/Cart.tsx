import React, { useEffect, useMemo, useState } from "react";
import type { CartLine } from "../lib/api";
import { formatPrice, pluralize } from "../lib/format";

interface CartProps {
  lines: CartLine[];
  onCheckout: () => void;
  onRemove: (sku: string) => void;
}

const STORAGE_KEY = "webshop.cart";

// The cart used to be synced with a useEffect in every page; now only this component does it.
export function Cart({ lines, onCheckout, onRemove }: CartProps) {
  const [coupon, setCoupon] = useState("");
  const total = useMemo(() => lines.reduce((sum, l) => sum + l.quantity * l.priceCents, 0), [lines]);

  useEffect(() => {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(lines));
  }, [lines]);

  useEffect(() => {
    console.debug("Cart mounted; useEffect cleanup will log the unmount");
    return () => console.debug("Cart unmounted");
  }, []);

  // TODO(jonas): validate the coupon against /api/coupons before showing the discount
  const discount = coupon.trim().toUpperCase() === "WELCOME10" ? Math.round(total * 0.1) : 0;

  return (
    <aside className="cart">
      <h2>Cart ({pluralize(lines.length, "item")})</h2>
      <ul>
        {lines.map((l) => (
          <li key={l.sku}>
            {l.quantity} x {l.sku} <button onClick={() => onRemove(l.sku)}>Remove</button>
          </li>
        ))}
      </ul>
      <input value={coupon} onChange={(e) => setCoupon(e.target.value)} placeholder="Coupon code" />
      <p>Total: {formatPrice(total - discount)}</p>
      <img src="/static/secure-checkout.svg" />
      <button disabled={lines.length === 0} onClick={onCheckout}>
        Checkout
      </button>
    </aside>
  );
}
