import { describe, expect, it } from 'vitest';
import { buildOrderFilter } from '../src/server/orders';
import { parseOrderNote } from '../src/shared/notes';

describe('buildOrderFilter', () => {
  it('returns no WHERE clause without filters', () => {
    expect(buildOrderFilter({})).toEqual({ where: '', params: [] });
  });

  it('numbers the parameters in order', () => {
    const { where, params } = buildOrderFilter({ status: 'paid', since: '2024-01-01' });
    expect(where).toBe('WHERE status = $1 AND created_at >= $2');
    expect(params).toEqual(['paid', '2024-01-01']);
  });
});

describe('parseOrderNote', () => {
  it('keeps customer notes that look like markers', () => {
    expect(parseOrderNote('TODO: ring the bell twice')).toEqual({ kind: 'note', text: 'TODO: ring the bell twice' });
    expect(parseOrderNote('FIXME leave at the door')).toEqual({ kind: 'note', text: 'FIXME leave at the door' });
  });

  // vitest shows console.log output only for failing tests.
  it('does not log the note', () => {
    console.log('notes are never logged');
    expect(parseOrderNote('').kind).toBe('empty');
  });
});
