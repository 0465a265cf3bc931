import React from "react";
import type { Product } from "../lib/api";
import { formatPrice } from "../lib/format";

interface ProductCardProps {
  product: Product;
  onAdd: (sku: string) => void;
}

// Supplier names can contain markup; React escapes them. Never render them with dangerouslySetInnerHTML.
export function ProductCard({ product, onAdd }: ProductCardProps) {
  const soldOut = product.stock === 0;
  return (
    <article className="product-card">
      <img src={product.imageUrl} alt={product.name} loading="lazy" />
      <h3>{product.name}</h3>
      <p className="price">{formatPrice(product.priceCents)}</p>
      {soldOut ? (
        <span className="badge">Sold out</span>
      ) : (
        <button onClick={() => onAdd(product.sku)}>Add to cart</button>
      )}
    </article>
  );
}
