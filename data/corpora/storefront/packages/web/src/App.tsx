import { useState } from 'react';
import { Header } from './components/Header';
import { CartDrawer } from './components/CartDrawer';
import { ProductList } from './components/ProductList';
import { PromoBanner } from './components/PromoBanner';
import { CheckoutPage } from './pages/CheckoutPage';
import { useCart } from './hooks/useCart';

type Route = 'shop' | 'checkout';

export function App() {
  const [route, setRoute] = useState<Route>('shop');
  const [drawerOpen, setDrawerOpen] = useState(false);
  const cart = useCart();

  return (
    <>
      <Header count={cart.count} onOpenCart={() => setDrawerOpen(true)} />
      <PromoBanner />
      {route === 'shop' ? <ProductList onAdd={cart.add} /> : <CheckoutPage items={cart.items} />}
      <CartDrawer
        open={drawerOpen}
        items={cart.items}
        onClose={() => setDrawerOpen(false)}
        onCheckout={() => {
          setDrawerOpen(false);
          setRoute('checkout');
        }}
      />
    </>
  );
}
