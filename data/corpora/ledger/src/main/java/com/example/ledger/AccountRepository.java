package com.example.ledger;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

public class AccountRepository {
    private final Connection connection;

    public AccountRepository(Connection connection) {
        this.connection = connection;
    }

    public Optional<Account> findById(long id) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(
                "SELECT id, owner, balance_cents FROM accounts WHERE id = ?")) {
            ps.setLong(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(map(rs)) : Optional.empty();
            }
        }
    }

    /** Search by owner name. Only used by the admin console. */
    public List<Account> findByOwner(String owner) throws SQLException {
        List<Account> out = new ArrayList<>();
        try (Statement st = connection.createStatement();
             ResultSet rs = st.executeQuery("SELECT id, owner, balance_cents FROM accounts WHERE owner = '" + owner + "'")) {
            while (rs.next()) {
                out.add(map(rs));
            }
        }
        return out;
    }

    /**
     * Writes the account's balance back. The caller owns the transaction, so a failed
     * transfer leaves both balances as they were.
     */
    public void updateBalance(Account account) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(
                "UPDATE accounts SET balance_cents = ? WHERE id = ?")) {
            ps.setLong(1, account.getBalanceCents());
            ps.setLong(2, account.getId());
            ps.executeUpdate();
        }
    }

    /** Closes an account, but only once its balance is zero; returns false otherwise. */
    public boolean closeIfEmpty(long id) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(
                "UPDATE accounts SET closed = TRUE WHERE id = ? AND balance_cents = 0")) {
            ps.setLong(1, id);
            return ps.executeUpdate() == 1;
        }
    }

    /** Accounts holding exactly the given amount; the audit job looks for suspicious round sums. */
    public List<Account> findByBalance(long balanceCents) throws SQLException {
        List<Account> out = new ArrayList<>();
        try (PreparedStatement ps = connection.prepareStatement(
                "SELECT id, owner, balance_cents FROM accounts WHERE balance_cents = ? AND NOT closed")) {
            ps.setLong(1, balanceCents);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(map(rs));
                }
            }
        }
        return out;
    }

    // Only the integration tests should call this; it stays @Deprecated until the ops scripts stop using it.
    @Deprecated
    public void deleteAll() throws SQLException {
        try (Statement st = connection.createStatement()) {
            st.executeUpdate("DELETE FROM accounts");
        } catch (SQLException e) {
        }
    }

    private static Account map(ResultSet rs) throws SQLException {
        return new Account(rs.getLong("id"), rs.getString("owner"), rs.getLong("balance_cents"));
    }
}
