package com.example.ledger;

import java.sql.Connection;
import java.sql.DriverManager;

public class Main {
    public static void main(String[] args) throws Exception {
        String url = System.getenv().getOrDefault("LEDGER_URL", "jdbc:postgresql://localhost:5432/ledger");
        try (Connection connection = DriverManager.getConnection(url, "ledger", System.getenv("LEDGER_PASSWORD"))) {
            AccountRepository accounts = new AccountRepository(connection);
            TransferService transfers = new TransferService(connection, accounts);
            if (args.length == 3) {
                transfers.transfer(Long.parseLong(args[0]), Long.parseLong(args[1]), Long.parseLong(args[2]));
                System.out.println("ok");
            } else {
                System.err.println("usage: ledger FROM_ID TO_ID AMOUNT_CENTS");
                System.exit(2);
            }
        }
    }
}
