<?php

declare(strict_types=1);

namespace Billing\Invoice;

use Billing\Db\Connection;

final class InvoiceRepository
{
    public function __construct(private readonly Connection $db)
    {
    }

    public function find(string $number): ?Invoice
    {
        $rows = $this->db->query('SELECT * FROM invoices WHERE number = :number', ['number' => $number]);

        return $rows ? Invoice::fromRow($rows[0]) : null;
    }

    /** @return list<Invoice> */
    public function overdue(\DateTimeImmutable $today): array
    {
        // The query below uses the partial index invoices_open_due_idx.
        $rows = $this->db->query(
            'SELECT * FROM invoices
              WHERE paid_at IS NULL
                AND due_on < :today
              ORDER BY due_on',
            ['today' => $today->format('Y-m-d')]
        );

        return array_map(Invoice::fromRow(...), $rows);
    }

    public function markPaid(string $number, string $providerRef): void
    {
        $this->db->query(
            'UPDATE invoices SET paid_at = NOW(), provider_ref = :ref WHERE number = :number',
            ['ref' => $providerRef, 'number' => $number]
        );
    }

    public function save(Invoice $invoice): void
    {
        $this->db->transactional(function (Connection $db) use ($invoice): void {
            $db->query(
                'INSERT INTO invoices (number, customer_id, total_cents, due_on)
                 VALUES (:number, :customer, :total, :due)',
                $invoice->toRow()
            );
            foreach ($invoice->lines as $line) {
                $db->query(
                    'INSERT INTO invoice_lines (invoice_number, description, amount_cents)
                     VALUES (:n, :d, :a)',
                    ['n' => $invoice->number, 'd' => $line->description, 'a' => $line->amountCents]
                );
            }
        });
    }

    /** Search by free text; the search query is matched with ILIKE, never concatenated. */
    public function search(string $query): array
    {
        return $this->db->query(
            "SELECT number FROM invoices WHERE customer_name ILIKE '%' || :q || '%'",
            ['q' => $query]
        );
    }
}
