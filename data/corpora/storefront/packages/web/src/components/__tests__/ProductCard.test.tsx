import { render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { ProductCard } from '../ProductCard';

const product = {
  id: 'p1',
  sku: 'SF-000101',
  name: 'Café moulu 250 g',
  price: { cents: 490, currency: 'EUR' as const },
  stock: 3,
  descriptionHtml: '<p>Medium roast</p>',
};

describe('ProductCard', () => {
  it('renders the price', () => {
    render(<ProductCard product={product} onAdd={vi.fn()} />);
    expect(screen.getByText('€4.90')).toBeTruthy();
  });

  it('disables the button when sold out', () => {
    render(<ProductCard product={{ ...product, stock: 0 }} onAdd={vi.fn()} />);
    expect(screen.getByRole('button').hasAttribute('disabled')).toBe(true);
  });

  it('hides products with a malformed SKU', () => {
    const { container } = render(<ProductCard product={{ ...product, sku: 'bad' }} onAdd={vi.fn()} />);
    expect(container.firstChild).toBeNull();
  });
});
