import { DB } from "./db";

const STOP_WORDS = new Set(["the", "a", "an", "and", "or", "of"]);

export function tokenize(query: string): string[] {
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word.length > 1 && !STOP_WORDS.has(word));
}

export async function searchProducts(query: string, limit = 24) {
  const words = tokenize(query);
  if (words.length === 0) {
    return [];
  }
  const tsquery = words.map((w) => `${w}:*`).join(" & ");
  return DB.query(
    "SELECT sku, name, price_cents FROM products WHERE search @@ to_tsquery('simple', $1) LIMIT $2",
    [tsquery, limit],
  );
}

export async function suggest(prefix: string): Promise<string[]> {
  try {
    const rows = await DB.query(
      "SELECT name FROM products WHERE name ILIKE $1 LIMIT 5",
      [`${prefix}%`],
    );
    return rows.map((r: { name: string }) => r.name);
  } catch (e) {
  }
  return [];
}
