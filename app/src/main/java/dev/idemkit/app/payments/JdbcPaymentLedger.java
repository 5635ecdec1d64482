package dev.idemkit.app.payments;

import dev.idemkit.domain.httpkey.ClientId;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;

/** Charges in the {@code payments} table of the app's PostgreSQL schema, with plain JDBC and bind parameters. */
public final class JdbcPaymentLedger implements PaymentLedger {
    private static final String INSERT = """
            INSERT INTO payments (id, client_id, account_id, amount, currency, created_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """;
    private static final String FIND = """
            SELECT account_id, amount, currency, created_at FROM payments WHERE id = ? AND client_id = ?
            """;
    private static final String FOR_ACCOUNT = """
            SELECT id, amount, currency, created_at FROM payments WHERE client_id = ? AND account_id = ?
            ORDER BY created_at, id LIMIT ?
            """;

    private final DataSource dataSource;

    public JdbcPaymentLedger(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    @Override
    public Payment charge(ClientId client, PaymentRequest request) {
        try (Connection c = dataSource.getConnection()) {
            Payment payment = charge(c, client, request);
            if (!c.getAutoCommit()) {
                c.commit();
            }
            return payment;
        } catch (SQLException e) {
            throw new IllegalStateException("could not record the payment: " + e.getMessage(), e);
        }
    }

    /**
     * This ledger charging on the caller's connection, inside the caller's transaction (committed by the caller);
     * reads still go through the pool.
     */
    public PaymentLedger on(Connection c) {
        return PaymentLedger.charging((client, request) -> {
            try {
                return JdbcPaymentLedger.charge(c, client, request);
            } catch (SQLException e) {
                throw new IllegalStateException("could not record the payment: " + e.getMessage(), e);
            }
        }, this);
    }

    private static Payment charge(Connection c, ClientId client, PaymentRequest request) throws SQLException {
        Payment payment = new Payment("pay_" + UUID.randomUUID().toString().replace("-", ""), client, request,
                Instant.now());
        try (PreparedStatement ps = c.prepareStatement(INSERT)) {
            ps.setString(1, payment.id());
            ps.setString(2, client.value());
            ps.setString(3, request.accountId());
            ps.setBigDecimal(4, request.amount());
            ps.setString(5, request.currency());
            ps.setTimestamp(6, Timestamp.from(payment.createdAt()));
            ps.executeUpdate();
        }
        return payment;
    }

    @Override
    public Optional<Payment> find(ClientId client, String paymentId) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(FIND)) {
            ps.setString(1, paymentId);
            ps.setString(2, client.value());
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                BigDecimal amount = rs.getBigDecimal(2);
                return Optional.of(new Payment(paymentId, client,
                        new PaymentRequest(amount, rs.getString(3), rs.getString(1)), rs.getTimestamp(4).toInstant()));
            } finally {
                if (!c.getAutoCommit()) {
                    c.rollback();
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not read the payment: " + e.getMessage(), e);
        }
    }

    @Override
    public List<Payment> forAccount(ClientId client, String accountId, int limit) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(FOR_ACCOUNT)) {
            ps.setString(1, client.value());
            ps.setString(2, accountId);
            ps.setInt(3, limit);
            List<Payment> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new Payment(rs.getString(1), client, new PaymentRequest(rs.getBigDecimal(2),
                            rs.getString(3), accountId), rs.getTimestamp(4).toInstant()));
                }
            } finally {
                if (!c.getAutoCommit()) {
                    c.rollback();
                }
            }
            return List.copyOf(out);
        } catch (SQLException e) {
            throw new IllegalStateException("could not list payments: " + e.getMessage(), e);
        }
    }
}
