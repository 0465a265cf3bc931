<?php

declare(strict_types=1);

namespace Billing\Db;

use PDO;
use PDOStatement;

/**
 * Thin wrapper around PDO. Every statement goes through query() with bound
 * parameters; this replaces the old mysql_query() helpers from billing v1.
 */
final class Connection
{
    private int $queryCount = 0;

    public function __construct(private readonly PDO $pdo)
    {
        $this->pdo->setAttribute(PDO::ATTR_ERRMODE, PDO::ERRMODE_EXCEPTION);
    }

    public static function fromDsn(string $dsn, string $user, string $password): self
    {
        return new self(new PDO($dsn, $user, $password));
    }

    /**
     * Runs one statement and returns all rows as associative arrays.
     *
     * @param array<string, scalar|null> $params
     * @return list<array<string, mixed>>
     */
    public function query(string $sql, array $params = []): array
    {
        $this->queryCount++;
        $stmt = $this->prepare($sql);
        $stmt->execute($params);

        return $stmt->fetchAll(PDO::FETCH_ASSOC);
    }

    public function transactional(callable $work): mixed
    {
        $this->pdo->beginTransaction();
        try {
            $result = $work($this);
            $this->pdo->commit();
            return $result;
        } catch (\Throwable $e) {
            $this->pdo->rollBack();
            throw $e;
        }
    }

    public function queryCount(): int
    {
        return $this->queryCount;
    }

    private function prepare(string $sql): PDOStatement
    {
        return $this->pdo->prepare($sql);
    }
}
