package dev.idemkit.app.payments;

import com.fasterxml.jackson.databind.JsonNode;
import dev.idemkit.domain.KeyRules;
import java.math.BigDecimal;
import java.util.regex.Pattern;

/** The seed's payment body: {@code {"amount": 150.00, "currency": "BRL", "account_id": "acc-123"}}. */
public record PaymentRequest(BigDecimal amount, String currency, String accountId) {
    private static final Pattern CURRENCY = Pattern.compile("[A-Z]{3}");
    private static final BigDecimal MAX = new BigDecimal("1000000000");
    private static final java.util.Set<String> FIELDS = java.util.Set.of("amount", "currency", "account_id");

    public PaymentRequest {
        if (amount == null || amount.signum() <= 0 || amount.scale() > 2 || amount.compareTo(MAX) > 0) {
            throw new IllegalArgumentException("amount must be a positive number with at most 2 decimals, below 1e9");
        }
        if (currency == null || !CURRENCY.matcher(currency).matches()) {
            throw new IllegalArgumentException("currency must be a 3-letter ISO 4217 code such as BRL");
        }
        KeyRules.requireValid("account_id", accountId);
    }

    /**
     * @throws IllegalArgumentException naming the field that is missing or wrong
     */
    public static PaymentRequest fromJson(JsonNode body) {
        if (!body.isObject()) {
            throw new IllegalArgumentException("body must be a JSON object");
        }
        // unknown fields are refused, not ignored: a misspelt field would otherwise be dropped silently, and an
        // ignored field would still change the request's fingerprint
        body.fieldNames().forEachRemaining(name -> {
            if (!FIELDS.contains(name)) {
                throw new IllegalArgumentException("unknown field '" + dev.idemkit.domain.Printable.id(name)
                        + "': a payment holds amount, currency and account_id only");
            }
        });
        JsonNode amount = body.get("amount");
        if (amount == null || !amount.isNumber()) {
            throw new IllegalArgumentException("amount is required and must be a number");
        }
        return new PaymentRequest(amount.decimalValue(), text(body, "currency"), text(body, "account_id"));
    }

    private static String text(JsonNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || !v.isTextual()) {
            throw new IllegalArgumentException(field + " is required and must be a string");
        }
        return v.asText();
    }
}
