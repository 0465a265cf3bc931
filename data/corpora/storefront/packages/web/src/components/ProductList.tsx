import { useState } from 'react';
import { useProducts } from '../hooks/useProducts';
import { ProductCard } from './ProductCard';
import type { CartLine } from '../hooks/useCart';

interface ProductListProps {
  onAdd: (line: Omit<CartLine, 'quantity'>) => void;
}

export function ProductList({ onAdd }: ProductListProps) {
  const [query, setQuery] = useState('');
  const { products, error } = useProducts(query);

  return (
    <section className="product-list">
      <input
        type="search"
        placeholder="Search coffee, tea, gear…"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
      />
      {error && <p role="alert">{error}</p>}
      <div className="product-list__grid">
        {products.map((p) => (
          <ProductCard key={p.id} product={p} onAdd={onAdd} />
        ))}
      </div>
    </section>
  );
}
