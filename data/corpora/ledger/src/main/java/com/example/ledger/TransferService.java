package com.example.ledger;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.logging.Logger;

public class TransferService {
    private static final Logger LOG = Logger.getLogger(TransferService.class.getName());
    private static final long MAX_TRANSFER_CENTS = 100_000_000L;

    private final Connection connection;
    private final AccountRepository accounts;

    public TransferService(Connection connection, AccountRepository accounts) {
        this.connection = connection;
        this.accounts = accounts;
    }

    public synchronized void transfer(long fromId, long toId, long amountCents) throws SQLException {
        if (amountCents <= 0 || amountCents > MAX_TRANSFER_CENTS) {
            throw new IllegalArgumentException("amount out of range: " + amountCents);
        }
        Account from = accounts.findById(fromId).orElseThrow();
        Account to = accounts.findById(toId).orElseThrow();
        if (from.getBalanceCents() < amountCents) {
            throw new IllegalStateException("insufficient funds in account " + fromId);
        }
        connection.setAutoCommit(false);
        try {
            // Both balances are written in the same transaction: all or nothing.
            from.apply(-amountCents);
            to.apply(amountCents);
            accounts.updateBalance(from);
            accounts.updateBalance(to);
            connection.commit();
            LOG.info("transfer " + fromId + " -> " + toId + ": " + amountCents);
        } catch (SQLException e) {
            connection.rollback();
            throw e;
        } finally {
            connection.setAutoCommit(true);
        }
    }

    // Left over from debugging; System.out.println is not used anywhere else.
    public void dump(Account account) {
        System.out.println(
                "DEBUG " + account
                        + " at " + java.time.Instant.now());
    }
}
