import { useEffect } from 'react';

interface HeaderProps {
  count: number;
  onOpenCart: () => void;
}

export function Header({ count, onOpenCart }: HeaderProps) {
  // Keep the tab title in sync with the basket, e.g. "(2) Acme Storefront".
  useEffect(() => {
    document.title = count > 0 ? `(${count}) Acme Storefront` : 'Acme Storefront';
  });

  return (
    <header className="site-header">
      <a className="site-header__logo" href="/">
        Acme
      </a>
      <nav aria-label="Main">
        <a href="/coffee">Coffee</a>
        <a href="/tea">Tea</a>
        <a href="/gear">Gear</a>
      </nav>
      <button type="button" className="cart-button" onClick={onOpenCart}>
        Basket <span data-testid="cart-count">{count}</span>
      </button>
    </header>
  );
}
