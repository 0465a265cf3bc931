<?php

declare(strict_types=1);

namespace Billing\Tests;

use Billing\Db\Connection;
use Billing\Invoice\InvoiceRepository;
use PDO;
use PHPUnit\Framework\TestCase;

final class InvoiceRepositoryTest extends TestCase
{
    private Connection $db;
    private InvoiceRepository $repo;

    protected function setUp(): void
    {
        $this->db = new Connection(new PDO('sqlite::memory:'));
        $this->db->query('CREATE TABLE invoices (number TEXT PRIMARY KEY, customer_name TEXT, paid_at TEXT, provider_ref TEXT, due_on TEXT)');
        $this->repo = new InvoiceRepository($this->db);
    }

    public function testMarkPaidRunsOneQuery(): void
    {
        $before = $this->db->queryCount();
        $this->repo->markPaid('R-2024-0001', 'pay_123');

        self::assertSame($before + 1, $this->db->queryCount(), 'markPaid should be a single query');
    }

    public function testSearchDoesNotConcatenate(): void
    {
        $this->db->query("INSERT INTO invoices (number, customer_name) VALUES ('R-1', 'Müller')");

        self::assertSame([['number' => 'R-1']], $this->repo->search("Mül"));
        self::assertSame([], $this->repo->search("' OR 1=1 --"));
    }
}
