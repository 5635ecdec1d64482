package dev.idemkit.app;

import dev.idemkit.app.consumers.AccountCredit;
import dev.idemkit.ports.out.OutgoingMessage;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A stream of {@code accounts.credit} messages with duplicates, for the tests that count totals across instances and
 * failures: a duplicate repeats an earlier message exactly (same id, same body), often a recent one, so that
 * consumers race for it; the expected balance of each account is the sum over distinct ids.
 *
 * @param messages the stream, in publishing order
 * @param accountPrefix every account's id starts with it (for reading the balances back)
 */
public record CreditPlan(List<OutgoingMessage> messages, String accountPrefix) {

    /** {@code n} credits over {@code accounts} accounts, a share {@code duplicates} of them repeats. */
    public static CreditPlan of(SplittableRandom random, int n, double duplicates, int accounts, String run) {
        String accountPrefix = "acc-" + run + "-";
        List<OutgoingMessage> sent = new ArrayList<>(n);
        int fresh = 0;
        for (int i = 0; i < n; i++) {
            if (!sent.isEmpty() && random.nextDouble() < duplicates) {
                int from = random.nextBoolean() ? Math.max(0, sent.size() - 20) : 0;
                sent.add(sent.get(from + random.nextInt(sent.size() - from)));
                continue;
            }
            String account = accountPrefix + random.nextInt(accounts);
            BigDecimal amount = BigDecimal.valueOf(1 + random.nextInt(9_999), 2);
            sent.add(OutgoingMessage.of("credit-" + run + "-" + fresh++, new AccountCredit(account, amount).toJson()));
        }
        return new CreditPlan(List.copyOf(sent), accountPrefix);
    }

    public int size() {
        return messages.size();
    }

    public long distinct() {
        return messages.stream().map(OutgoingMessage::id).distinct().count();
    }

    /** Each account's sum over distinct message ids. */
    public Map<String, BigDecimal> expectedBalances() {
        Map<String, AccountCredit> byId = new LinkedHashMap<>();
        messages.forEach(m -> byId.putIfAbsent(m.id(), AccountCredit.parse(m.body())));
        Map<String, BigDecimal> sums = new HashMap<>();
        byId.values().forEach(c -> sums.merge(c.accountId(), c.amount(), BigDecimal::add));
        return sums;
    }

    /** The balances of this plan's accounts as the app's {@code accounts} table in {@code schema} holds them. */
    public Map<String, BigDecimal> balances(String schema) throws SQLException {
        Map<String, BigDecimal> balances = new HashMap<>();
        try (Connection c = TestEnvironment.connect();
                PreparedStatement ps = c.prepareStatement("SELECT id, balance FROM " + schema
                        + ".accounts WHERE id LIKE ?")) {
            ps.setString(1, accountPrefix + "%");
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    balances.put(rs.getString(1), rs.getBigDecimal(2));
                }
            }
        }
        return balances;
    }
}
