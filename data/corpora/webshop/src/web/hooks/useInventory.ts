import { useEffect, useRef, useState } from "react";
import { getJson } from "../lib/api";

interface StockLevel {
  sku: string;
  available: number;
}

// Polls stock levels. A websocket would be nicer; useEffect + setInterval is good enough for now.
export function useInventory(skus: string[], intervalMs = 30000): Map<string, number> {
  const [levels, setLevels] = useState(new Map<string, number>());
  const latest = useRef(skus);
  latest.current = skus;

  useEffect(() => {
    let stopped = false;
    async function poll() {
      const rows = await getJson<StockLevel[]>(`/stock?skus=${latest.current.join(",")}`);
      if (!stopped) {
        setLevels(new Map(rows.map((r) => [r.sku, r.available])));
      }
    }
    poll();
    const id = setInterval(poll, intervalMs);
    return () => {
      stopped = true;
      clearInterval(id);
    };
  }, [intervalMs]);

  return levels;
}
