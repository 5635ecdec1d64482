package dev.idemkit.app.consumers;

import com.fasterxml.jackson.databind.JsonNode;
import dev.idemkit.app.json.CanonicalJson;
import dev.idemkit.domain.KeyRules;
import dev.idemkit.domain.retry.NonRetryableException;
import java.math.BigDecimal;

/** A credit to an account: {@code {"account_id": "acc-1", "amount": 100.00}}. */
public record AccountCredit(String accountId, BigDecimal amount) {
    public static final String QUEUE = "accounts.credit";

    public AccountCredit {
        KeyRules.requireValid("account_id", accountId);
        if (amount == null || amount.signum() <= 0 || amount.scale() > 2) {
            throw new IllegalArgumentException("amount must be positive with at most 2 decimals");
        }
    }

    /**
     * @throws NonRetryableException when the body is not JSON or a field is missing or wrong
     */
    public static AccountCredit parse(byte[] body) {
        try {
            JsonNode n = CanonicalJson.parse(body);
            JsonNode amount = n.get("amount");
            if (amount == null || !amount.isNumber()) {
                throw new IllegalArgumentException("amount is required and must be a number");
            }
            return new AccountCredit(OrderPlaced.text(n, "account_id"), amount.decimalValue());
        } catch (IllegalArgumentException e) {
            throw new NonRetryableException("malformed AccountCredit: " + e.getMessage(), e);
        }
    }

    public byte[] toJson() {
        var node = CanonicalJson.MAPPER.createObjectNode();
        node.put("account_id", accountId);
        node.put("amount", amount);
        return CanonicalJson.canonical(node);
    }
}
