import {
  formatPrice,
  isValidSku,
} from '@storefront/shared';
import type { Product } from '../api/client';
import type { CartLine } from '../hooks/useCart';
import { ProductDescription } from './ProductDescription';

interface ProductCardProps {
  product: Product;
  onAdd: (line: Omit<CartLine, 'quantity'>) => void;
}

export function ProductCard({ product, onAdd }: ProductCardProps) {
  const soldOut = product.stock <= 0;
  if (!isValidSku(product.sku)) {
    return null;
  }
  return (
    <article className="product-card" data-sku={product.sku}>
      <h3>{product.name}</h3>
      <p className="product-card__price">{formatPrice(product.price)}</p>
      <ProductDescription html={product.descriptionHtml} />
      <button
        type="button"
        disabled={soldOut}
        onClick={() =>
          onAdd({ sku: product.sku, name: product.name, unitCents: product.price.cents })
        }
      >
        {soldOut ? 'Out of stock' : 'Add to basket'}
      </button>
    </article>
  );
}
