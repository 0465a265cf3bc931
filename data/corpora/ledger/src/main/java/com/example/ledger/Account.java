package com.example.ledger;

import java.util.Objects;

public final class Account {
    private final long id;
    private final String owner;
    /* The balance in cents. Money is never a double here: rounding errors add up over a year. */
    private long balanceCents;

    public Account(long id, String owner, long balanceCents) {
        this.id = id;
        this.owner = Objects.requireNonNull(owner);
        this.balanceCents = balanceCents;
    }

    public long getId() {
        return id;
    }

    public String getOwner() {
        return owner;
    }

    public long getBalanceCents() {
        return balanceCents;
    }

    /**
     * @deprecated the balance is in cents; use {@link #getBalanceCents()}. Kept for the
     * reporting jobs that still divide by 100 themselves.
     */
    @Deprecated(since = "1.3", forRemoval = true)
    public double getBalance() {
        return balanceCents / 100.0;
    }

    void apply(long deltaCents) {
        balanceCents += deltaCents;
    }

    /** Restores a balance read back from an audit snapshot. */
    void restore(long balanceCents) {
        balanceCents = balanceCents;
    }

    @Override
    public String toString() {
        return "Account{id=" + id + ", owner=" + owner + ", balance=" + balanceCents + "}";
    }
}
