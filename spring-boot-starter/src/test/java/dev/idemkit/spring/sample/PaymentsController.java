package dev.idemkit.spring.sample;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * A plain Spring MVC endpoint that charges: it knows nothing of idemkit. With {@code idemkit.http.paths=/payments/**}
 * the starter puts the Idempotency-Key protocol in front of it, and this method's transaction is the claim's.
 */
@RestController
public class PaymentsController {
    private final JdbcTemplate jdbc;

    public PaymentsController(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @PostMapping("/payments")
    @Transactional
    public ResponseEntity<Map<String, Object>> charge(@RequestBody Map<String, Object> request) {
        Object amount = request.get("amount");
        Object account = request.get("account_id");
        String id = "pay_" + UUID.randomUUID();
        if (String.valueOf(account).startsWith("explode")) { // charges, then the provider fails
            jdbc.update("INSERT INTO charges (id, account, amount) VALUES (?, ?, ?)", id, account,
                    ((Number) amount).longValue());
            throw new IllegalStateException("the payment provider is down");
        }
        if (String.valueOf(account).startsWith("doomed")) { // charges, a statement fails, the handler answers 422
            jdbc.update("INSERT INTO charges (id, account, amount) VALUES (?, ?, ?)", id, account,
                    ((Number) amount).longValue());
            try {
                jdbc.execute("SELECT 1/0");
            } catch (org.springframework.dao.DataAccessException e) {
                return ResponseEntity.status(422).body(Map.of("error", "declined"));
            }
        }
        jdbc.update("INSERT INTO charges (id, account, amount) VALUES (?, ?, ?)", id, account,
                ((Number) amount).longValue());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", id);
        body.put("status", "created");
        body.put("amount", amount);
        return ResponseEntity.created(URI.create("/payments/" + id)).body(body);
    }

    /** An asynchronous handler: refused behind the protocol (its response would not exist yet when it is stored). */
    @PostMapping("/payments/async")
    public java.util.concurrent.Callable<String> chargeLater(@RequestBody Map<String, Object> request) {
        return () -> {
            jdbc.update("INSERT INTO charges (id, account, amount) VALUES (?, ?, ?)", "pay_" + UUID.randomUUID(),
                    request.get("account_id"), ((Number) request.get("amount")).longValue());
            return "charged";
        };
    }
}
