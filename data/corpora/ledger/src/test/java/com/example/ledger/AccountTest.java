package com.example.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class AccountTest {
    @Test
    void applyAddsToTheBalance() {
        Account a = new Account(1, "ada", 500);
        a.apply(-200);
        assertEquals(300, a.getBalanceCents());
    }

    @Test
    void toStringNamesTheOwner() {
        // TODO: System.out.println(a) would be handy here, but the test must stay quiet
        assertEquals("Account{id=1, owner=ada, balance=0}", new Account(1, "ada", 0).toString());
    }
}
