import React, { useState } from 'react';
import { getJson } from '../lib/api';

const LABELS = {
  pending: 'Waiting for payment',
  paid: 'Paid, being packed',
  shipped: 'On its way',
  cancelled: 'Cancelled',
};

export function OrderStatus({ orderId }) {
  const [order, setOrder] = useState(null);
  const [loading, setLoading] = useState(false);

  async function refresh() {
    setLoading(true);
    try {
      setOrder(await getJson(`/orders/${orderId}`));
    } finally {
      setLoading(false);
    }
  }

  return (
    <div className="order-status">
      <p>{order ? LABELS[order.status] || order.status : 'Status not loaded yet'}</p>
      <button disabled={loading} onClick={refresh}>
        {loading ? 'Refreshing' : 'Refresh'}
      </button>
    </div>
  );
}
