import React, { useState } from "react";

interface HeaderProps {
  cartCount: number;
  onNavigate: (page: "shop" | "cart" | "account") => void;
}

/**
 * Static header. It needs no useEffect: the cart count comes in as a prop.
 */
export function Header({ cartCount, onNavigate }: HeaderProps) {
  const [menuOpen, setMenuOpen] = useState(false);
  const title = "webshop";
  return (
    <header className="header">
      <img src="/static/logo.svg" alt="webshop logo" />
      <span className="title">{title}</span>
      <button onClick={() => setMenuOpen(!menuOpen)} aria-expanded={menuOpen}>
        Menu
      </button>
      <nav hidden={!menuOpen}>
        <a onClick={() => onNavigate("shop")}>Shop</a>
        <a onClick={() => onNavigate("account")}>Account</a>
        <a onClick={() => onNavigate("cart")}>Cart ({cartCount})</a>
      </nav>
      <img src="/static/cart-icon.svg" className="cart-icon" />
    </header>
  );
}
