import React, { useEffect, useState } from "react";
import { getJson, type Product } from "../lib/api";
import { useDebounce } from "../hooks/useDebounce";
import { ProductCard } from "./ProductCard";

interface ProductListProps {
  category: string;
  onAdd: (sku: string) => void;
}

export function ProductList({ category, onAdd }: ProductListProps) {
  const [products, setProducts] = useState<Product[]>([]);
  const [query, setQuery] = useState("");
  const [error, setError] = useState<string | null>(null);
  const debouncedQuery = useDebounce(query);

  useEffect(() => {
    const controller = new AbortController();
    getJson<Product[]>(`/products?category=${category}&q=${debouncedQuery}`, controller.signal)
      .then(setProducts)
      .catch((e) => setError(String(e)));
    return () => controller.abort();
  }, [category, debouncedQuery]);

  useEffect(() => {
    document.title = `${category} | webshop`;
  }, [category]);

  if (error) {
    return <p className="error">Could not load products: {error}</p>;
  }
  return (
    <section>
      <input value={query} onChange={(e) => setQuery(e.target.value)} placeholder="Search products" />
      <div className="grid">
        {products.map((p) => (
          <ProductCard key={p.sku} product={p} onAdd={onAdd} />
        ))}
      </div>
    </section>
  );
}
