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

    public void updateBalance(Account account) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(
                "UPDATE accounts SET balance_cents = ? WHERE id = ?")) {
            ps.setLong(1, account.getBalanceCents());
            ps.setLong(2, account.getId());
            ps.executeUpdate();
        }
    }

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
