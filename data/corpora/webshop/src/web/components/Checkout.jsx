import React, { useEffect, useState } from 'react';
import { postJson } from '../lib/api';

export function Checkout({ lines, email, onDone }) {
  const [status, setStatus] = useState('idle');

  useEffect(() => {
    if (lines.length === 0) {
      onDone();
    }
  }, [lines, onDone]);

  async function pay() {
    setStatus('paying');
    try {
      await postJson('/orders', { email, lines });
      setStatus('paid');
      onDone();
    } catch (err) {
      console.log('payment failed', err);
      setStatus('failed');
    }
  }

  return (
    <div className="checkout">
      <p>Paying as {email}</p>
      <button disabled={status === 'paying'} onClick={pay}>
        Pay now
      </button>
      {status === 'failed' && <p className="error">Payment failed. Please try again.</p>}
    </div>
  );
}
