package com.example.ledger;

import java.util.Objects;

public final class Account {
    private final long id;
    private final String owner;
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

    void apply(long deltaCents) {
        balanceCents += deltaCents;
    }

    @Override
    public String toString() {
        return "Account{id=" + id + ", owner=" + owner + ", balance=" + balanceCents + "}";
    }
}
